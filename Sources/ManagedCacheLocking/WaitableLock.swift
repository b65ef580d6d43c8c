#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock that a caller can also wait on, until the value meets a condition:
/// a pthread mutex and a condition variable, on every platform.
///
/// For the rare wait of a small per-object state (a user's callback waiting for another callback
/// of the same user to end), where `Lock` would need a second lock held across the wait to block
/// on. Not the package's general lock: `Lock` is cheaper and, on Apple platforms, donates the
/// waiter's priority to the holder, which a pthread mutex with a condition variable does not.
///
/// Every `withLock` wakes the waiters as it unlocks, so a condition may read anything the value
/// holds; waking costs a few instructions when nobody waits.
public final class WaitableLock<Value>: @unchecked Sendable {
    // Safe to be Sendable: `value` is only read or written inside `withLock`, between the lock and
    // the unlock of `mutex` (a condition is evaluated there too: `pthread_cond_wait` returns with
    // the mutex held), and the mutex and condition are never copied or moved: each lives in its own
    // allocation for the object's lifetime, as pthread objects must keep their addresses.
    //
    // `@usableFromInline` so that the inlinable `withLock` methods can reach them (nothing else in
    // this module touches them), as in `Lock`; `@exclusivity(unchecked)` as there too: the mutex
    // already makes every access to `value` exclusive, so the runtime check could never fire.
    @exclusivity(unchecked) @usableFromInline var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Creates a lock guarding `initialValue`.
    public init(_ initialValue: Value) {
        value = initialValue
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value, then wakes every waiter. Not reentrant.
    ///
    /// Both `withLock` methods are `@inlinable`, as `Lock`'s are: specialized where they are
    /// called, not one generic copy passing the value through the runtime's value witnesses (a
    /// user's attachment publishes through this lock on every `manage`).
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withLock(waitingUntil: { _ in true }, then: body)
    }

    /// Waits until `isReady(value)` holds (releasing the lock while it waits), then runs `body`
    /// with exclusive access to the value, as one step with the last evaluation of `isReady`;
    /// then wakes every waiter. Not reentrant: neither closure may take this lock.
    @inlinable
    public func withLock<Result>(
        waitingUntil isReady: (Value) -> Bool, then body: (inout Value) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        while !isReady(value) { pthread_cond_wait(condition, mutex) }
        return try body(&value)
    }
}
