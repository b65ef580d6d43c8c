#if !MANAGEDCACHE_SWIFT_MUTEX
#if canImport(os)
import os
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock: the package's locking primitive (`WaitableLock` adds waiting on a
/// condition, for the few places that must block until a state changes).
///
/// Which lock, and why:
/// - **Apple platforms**: an `os_unfair_lock`. `Synchronization.Mutex` needs iOS 18, macOS 15,
///   tvOS 18, watchOS 11, visionOS 2, and the package supports iOS 15, macOS 12, tvOS 15,
///   watchOS 8 and visionOS 1; `os_unfair_lock` exists on all of them (iOS 10, macOS 10.12), is
///   what `Mutex` uses there itself, and donates the waiter's priority to the holder (a main
///   thread waiting in `manage` lifts the background thread that holds the lock).
/// - **Linux**: a default pthread mutex, not `Synchronization.Mutex`. Measured with the
///   `manage-latency` benchmark: `Mutex` on Linux spins in user space before it waits
///   on a priority-inheritance futex, and on a busy 2-core machine the spinning waiters take the
///   CPU from the thread that holds the lock; `manage`'s p99 under load was 1.2–1.6 ms for a
///   memory hit with `Mutex` and 0.11–0.16 ms with the pthread mutex, in the same runs. An
///   uncontended lock costs about the same. ThreadSanitizer also sees this lock (it cannot see
///   `Mutex`'s futex on Linux), so one lock serves every build.
/// - `-Xswiftc -DMANAGEDCACHE_SWIFT_MUTEX` makes `Lock` a typealias of `Mutex` instead, to compare.
///
/// It has the same `init(_:)` and `withLock(_:)` as `Mutex`.
///
/// Both `withLock` methods are `@inlinable`: this module is not the engine's, and without that every
/// call site ran one generic copy of them, passing its closure's result through the runtime's
/// value witnesses. Specialized at each call site, `MemoryCache` lookups take 16 % fewer
/// instructions and a `manage` memory hit 4 % fewer (`memory-cache` and `manage-hit` under callgrind).
public final class Lock<Value>: @unchecked Sendable {
    // Safe to be Sendable: `value` is only read or written inside `withLock`, between the lock and
    // the unlock of `lock` (it is `@usableFromInline` only so that the inlinable `withLock` can reach
    // it; nothing else in this module touches it), and the lock is never copied or moved: it lives in its own allocation for the object's lifetime (an
    // `os_unfair_lock` or a pthread mutex must keep its address; a stored property passed `inout`
    // would not).
    // `@exclusivity(unchecked)`: no runtime exclusivity check on `value`. The lock already makes
    // every access exclusive (the only access is `withLock`'s `inout`, and `withLock` is not
    // reentrant), so the check could never fire; it cost a thread-local access-set insertion and
    // removal on every `withLock`: 6 % of the instructions of a `manage` memory hit
    // (`manage-hit` under callgrind, 4.49 → 4.21 G).
    @exclusivity(unchecked) @usableFromInline var value: Value
    #if canImport(os)
    @usableFromInline let lock: UnsafeMutablePointer<os_unfair_lock>
    #else
    @usableFromInline let lock: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// Creates a lock guarding `initialValue`.
    public init(_ initialValue: Value) {
        value = initialValue
        lock = .allocate(capacity: 1)
        #if canImport(os)
        lock.initialize(to: os_unfair_lock())
        #else
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        #endif
    }

    deinit {
        #if !canImport(os)
        pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: `body` must not take this
    /// lock again.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        #if canImport(os)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        #else
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        #endif
        return try body(&value)
    }

    /// Runs `body` like `withLock(_:)`, unless others hold the lock for `seconds`: then returns
    /// `nil` without running it. For a caller with a time budget that has something else to do
    /// than wait longer (a synchronous file-cache read inside `manage`).
    ///
    /// Polls with `trylock`: `os_unfair_lock` has no timed wait, and on Linux ThreadSanitizer
    /// sees `trylock` as surely as `lock`, so both platforms do the same. For the first
    /// `LockClock.spin` seconds it polls without sleeping, then 20 µs apart. Why spin first: the
    /// locks a budgeted caller waits for are mostly held a few microseconds, and a sleep, however
    /// short, costs a timer's slack (50 µs on Linux) and a wake-up on a busy CPU (in a
    /// scheduler trace of `manage-latency`, these 20 µs naps were the calling thread's most
    /// frequent sleep inside `manage`).
    @inlinable
    public func withLock<Result, Failure: Error>(
        waitingAtMost seconds: Double, _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        if !tryLock() {
            let start = LockClock.seconds()
            let (deadline, spinEnd) = (start + seconds, start + min(seconds, LockClock.spin))
            repeat {
                let now = LockClock.seconds()
                guard now < deadline else { return nil }
                if now >= spinEnd { usleep(20) }
            } while !tryLock()
        }
        #if canImport(os)
        defer { os_unfair_lock_unlock(lock) }
        #else
        defer { pthread_mutex_unlock(lock) }
        #endif
        return try body(&value)
    }

    @usableFromInline
    func tryLock() -> Bool {
        #if canImport(os)
        os_unfair_lock_trylock(lock)
        #else
        pthread_mutex_trylock(lock) == 0
        #endif
    }
}

/// The monotonic clock of `withLock(waitingAtMost:_:)`.
@usableFromInline
enum LockClock {
    /// How long a bounded wait polls without sleeping before it polls 20 µs apart.
    @usableFromInline static let spin = 0.000_05

    /// Seconds since an arbitrary start.
    @usableFromInline
    static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// A `Lock` that several objects can hold: an object to share. In this build `Lock` is one.
public typealias SharedLock<Value> = Lock<Value>

/// The closure `withLock` takes, for wrappers that pass one through (`Mutex` takes
/// `sending` values, see the comparison build below).
public typealias LockBody<Value, Result, Failure: Error> = (inout Value) throws(Failure) -> Result
#else
// portability-lint: allow a comparison build on Linux only (-DMANAGEDCACHE_SWIFT_MUTEX)
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `Synchronization.Mutex`, for comparison builds (`-Xswiftc -DMANAGEDCACHE_SWIFT_MUTEX`); see
/// the class above for why it is not the default.
// portability-lint: allow a comparison build on Linux only (-DMANAGEDCACHE_SWIFT_MUTEX)
public typealias Lock<Value> = Mutex<Value>

/// The closure `Mutex.withLock` takes.
public typealias LockBody<Value, Result, Failure: Error> = (inout sending Value) throws(Failure) -> sending Result

/// A `Mutex` that several objects can hold (a `Mutex` itself cannot be shared or copied).
public final class SharedLock<Value>: Sendable {
    // portability-lint: allow a comparison build on Linux only (-DMANAGEDCACHE_SWIFT_MUTEX)
    private let mutex: Mutex<Value>

    /// Creates a lock guarding `initialValue`.
    public init(_ initialValue: sending Value) {
        // portability-lint: allow a comparison build on Linux only (-DMANAGEDCACHE_SWIFT_MUTEX)
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result, Failure: Error>(_ body: LockBody<Value, Result, Failure>) throws(Failure) -> Result {
        try mutex.withLock(body)
    }

    /// Runs `body` unless others hold the lock for `seconds` (see the class above).
    public func withLock<Result, Failure: Error>(
        waitingAtMost seconds: Double, _ body: LockBody<Value, Result, Failure>
    ) throws(Failure) -> Result? {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + seconds
        while true {
            if let result = try mutex.withLockIfAvailable(body) { return result }
            clock_gettime(CLOCK_MONOTONIC, &now)
            guard Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 < deadline else { return nil }
            usleep(20)
        }
    }
}
#endif
