import Foundation

/// A value behind an `NSLock`: what the examples use where an app shipping for iOS 15 would use
/// a lock (`Synchronization.Mutex` needs iOS 18 / macOS 15; `OSAllocatedUnfairLock` iOS 16).
///
/// ```swift
/// let text = Locked("…")
/// text.withLock { $0 = "ready" }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    // Safe to be Sendable: `value` is only read or written inside `withLock`, between `lock()`
    // and `unlock()` of the one `NSLock`, which is never released while the object lives.
    private var value: Value
    private let lock = NSLock()

    /// Creates a lock guarding `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
