#if MANAGEDCACHE_TSAN
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock: the package's one locking primitive.
///
/// In normal builds `Lock` is `Synchronization.Mutex`. ThreadSanitizer cannot see `Mutex` on
/// Linux (it waits on a raw futex that TSan does not intercept), so every access under it looks
/// like a race. Builds made for TSan (`swift test --sanitize=thread -Xswiftc -DMANAGEDCACHE_TSAN`) use this
/// pthread-mutex version instead, which TSan understands, so its reports are about real races.
public final class Lock<Value>: @unchecked Sendable {
    // Safe to be Sendable: `value` is only read or written inside `withLock`, between
    // pthread_mutex_lock and pthread_mutex_unlock on `mutex`, which is never copied or moved
    // (it lives in its own allocation for the object's lifetime).
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates a lock guarding `initialValue`.
    public init(_ initialValue: Value) {
        value = initialValue
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
#else
import Synchronization

/// A value guarded by a lock: the package's one locking primitive, `Synchronization.Mutex`.
///
/// Builds for ThreadSanitizer (`-Xswiftc -DMANAGEDCACHE_TSAN`) swap in a pthread mutex, because
/// TSan cannot see `Mutex` on Linux and would report every access under it as a race.
public typealias Lock<Value> = Mutex<Value>
#endif
