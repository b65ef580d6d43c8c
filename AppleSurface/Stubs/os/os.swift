// Stand-in for the lock part of Apple's `os` module (<os/lock.h>), available since iOS 10,
// macOS 10.12, tvOS 10, watchOS 3.
// Sources: https://developer.apple.com/documentation/os/os_unfair_lock_s,
//          https://developer.apple.com/documentation/os/os_unfair_lock_lock(_:),
//          https://developer.apple.com/documentation/os/os_unfair_lock_unlock(_:),
//          https://developer.apple.com/documentation/os/os_unfair_lock_trylock(_:),
//          https://developer.apple.com/documentation/os/os_unfair_lock_assert_owner(_:).
// Apple imports the C struct `os_unfair_lock_s` (one `UInt32`), hence implicitly Sendable, and
// the functions take `os_unfair_lock_t` (`UnsafeMutablePointer<os_unfair_lock_s>`).

public struct os_unfair_lock_s: Sendable {
    public var _os_unfair_lock_opaque: UInt32
    public init() { _os_unfair_lock_opaque = 0 }
    public init(_os_unfair_lock_opaque: UInt32) { self._os_unfair_lock_opaque = _os_unfair_lock_opaque }
}
public typealias os_unfair_lock = os_unfair_lock_s
public typealias os_unfair_lock_t = UnsafeMutablePointer<os_unfair_lock_s>

public func os_unfair_lock_lock(_ lock: os_unfair_lock_t) {}
public func os_unfair_lock_unlock(_ lock: os_unfair_lock_t) {}
public func os_unfair_lock_trylock(_ lock: os_unfair_lock_t) -> Bool { true }
public func os_unfair_lock_assert_owner(_ lock: os_unfair_lock_t) {}
public func os_unfair_lock_assert_not_owner(_ lock: os_unfair_lock_t) {}
