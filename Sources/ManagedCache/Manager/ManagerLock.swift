import ManagedCacheLocking

/// An `ObjectManager`'s state behind its one lock. After releasing the lock, `withLock` creates
/// the fetch tasks that the locked code decided to start (`ManagerState.fetchStarts`), so no
/// task is ever created while the lock that every `manage` takes is held (see `FetchTaskSlot`),
/// and no code path can forget to start a fetch it created.
final class ManagerLock: Sendable {
    private let lock: Lock<ManagerState>

    init(_ state: sending ManagerState) {
        lock = Lock(state)
    }

    #if MANAGEDCACHE_LOCK_PROFILE
    /// `withLock`, timed and counted by call site (`ManagerLockProfile`).
    func withLock<Result, Failure: Error>(
        file: String = #fileID, line: Int = #line, _ body: LockBody<ManagerState, Result, Failure>
    ) throws(Failure) -> Result {
        let asked = MonotonicInstant.now
        var (taken, released) = (asked, asked)
        defer {
            ManagerLockProfile.record(
                file: file, line: line, waited: taken.nanoseconds - asked.nanoseconds,
                held: released.nanoseconds - taken.nanoseconds)
        }
        return try withLockStartingFetches { state throws(Failure) -> Result in
            taken = .now
            defer { released = .now }
            return try body(&state)
        }
    }
    #else
    /// Runs `body` with exclusive access to the state, then starts the fetches it created. Not
    /// reentrant: `body` must not take this lock again.
    func withLock<Result, Failure: Error>(_ body: LockBody<ManagerState, Result, Failure>) throws(Failure) -> Result {
        try withLockStartingFetches(body)
    }
    #endif

    private func withLockStartingFetches<Result, Failure: Error>(
        _ body: LockBody<ManagerState, Result, Failure>
    ) throws(Failure) -> Result {
        var starts: [FetchStart] = []
        defer { for start in starts { start.run() } }
        return try lock.withLock { state throws(Failure) -> Result in
            defer {
                if !state.fetchStarts.isEmpty {
                    starts = state.fetchStarts
                    state.fetchStarts.removeAll()
                }
            }
            return try body(&state)
        }
    }
}
