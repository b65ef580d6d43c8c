import ManagedCacheLocking

/// An `ObjectManager`'s state behind its one lock, with two rules that keep the lock's sections,
/// and `manage`, short:
///
/// - **Fetch tasks are created after the lock.** The locked code only records them
///   (`ManagerState.fetchStarts`), so no task is ever created while the lock that every `manage`
///   takes is held (see `FetchTaskSlot`), and no code path can forget to start a fetch it created.
///   `withLock` creates them once the lock is released; a budgeted caller gets them back instead
///   (`Budgeted.starts`), to hand them off its thread.
/// - **A caller with a wait budget never waits longer**. `withLock(waitingAtMost:_:otherwise:)`
///   spins for the lock at most that long. Past it, or while sections left earlier still wait,
///   it leaves its section to be run later and returns at once. Left sections run in the order
///   they were left, before the section of the next caller that takes the lock without a
///   budget (so nothing reads the state without them), or on the hand-off queue, whichever comes
///   first; what they decide is done on the hand-off queue, after the lock.
///
/// Why leave a section rather than wait: on a busy machine the lock's holder is sometimes
/// preempted while it holds the lock, and a waiter then waits for the holder's next time slice,
/// and once woken, for a CPU of its own: tenths of a millisecond to milliseconds, most of a
/// `manage` call's p99 under load.
///
///     budgeted caller ── lock within budget, nothing left waiting ──▶ runs its section now
///            └───────── otherwise ──▶ left ── next holder without a budget, or the hand-off
///                                              queue's drain ──▶ runs, in the order left
final class ManagerLock: Sendable {
    /// A section left by a budgeted caller: it runs on the locked state and returns what to do
    /// once the lock is released (on the hand-off queue).
    typealias LeftSection = @Sendable (inout ManagerState) -> () -> Void

    private let lock: SharedLock<ManagerState>
    /// Sections left by budgeted callers, oldest first. A lock of its own, held only to append
    /// or take: leaving a section must not wait for the state's lock.
    private let left = Lock<[LeftSection]>([])

    init(_ state: sending ManagerState) {
        lock = SharedLock(state)
    }

    /// What a budgeted caller's section returned, and the fetches it decided to start: the caller
    /// creates their tasks (or hands them off) after the lock.
    struct Budgeted<Result> {
        let result: Result
        let starts: [FetchStart]
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
    /// Runs `body` with exclusive access to the state, after the sections budgeted callers left;
    /// then starts the fetches they created. Not reentrant: `body` must not take this lock again.
    func withLock<Result, Failure: Error>(_ body: LockBody<ManagerState, Result, Failure>) throws(Failure) -> Result {
        try withLockStartingFetches(body)
    }
    #endif

    private func withLockStartingFetches<Result, Failure: Error>(
        _ body: LockBody<ManagerState, Result, Failure>
    ) throws(Failure) -> Result {
        var starts: [FetchStart] = []
        var handOff = CallerHandOff()
        defer {
            for start in starts { start.run() }
            handOff.send()
        }
        return try lock.withLock { state throws(Failure) -> Result in
            state.lockSections &+= 1
            handOff.then = _runLeftSections(&state)
            defer { starts = state.takeFetchStarts() }
            return try body(&state)
        }
    }

    /// Runs `body` if the lock can be had within `seconds` and no section left earlier still
    /// waits; otherwise leaves the section `otherwise` makes (called only then) and returns `nil`.
    /// The section left runs exactly once, later, on another thread (see the type's comment).
    func withLock<Result>(
        waitingAtMost seconds: Double, _ body: (inout ManagerState) -> Result, otherwise: () -> LeftSection
    ) -> Budgeted<Result>? {
        // Behind sections left earlier: this caller's own earlier calls may be among them, and
        // its new section must not overtake them (a user re-managed twice ends on its last request).
        if !hasLeftSections {
            #if MANAGEDCACHE_LOCK_PROFILE
            let asked = MonotonicInstant.now
            #endif
            let ran = lock.withLock(waitingAtMost: seconds) { state -> Budgeted<Result> in
                #if MANAGEDCACHE_LOCK_PROFILE
                let taken = MonotonicInstant.now
                defer {
                    ManagerLockProfile.record(
                        file: #fileID, line: #line, waited: taken.nanoseconds - asked.nanoseconds,
                        held: MonotonicInstant.now.nanoseconds - taken.nanoseconds)
                }
                #endif
                state.lockSections &+= 1
                let result = body(&state)
                return Budgeted(result: result, starts: state.takeFetchStarts())
            }
            if let ran { return ran }
        }
        leave(otherwise())
        return nil
    }

    /// How many sections have run under the lock since the manager was made, this question's
    /// own not counted: the benchmark program prints the sections one call takes.
    var sectionCount: UInt64 { lock.withLock { $0.lockSections } }

    /// Whether sections left by budgeted callers wait to run.
    private var hasLeftSections: Bool { left.withLock { !$0.isEmpty } }

    /// Queues `section`; the first section of a batch also queues a drain on the hand-off queue,
    /// which takes the lock (waiting as long as it must) and runs the batch, unless a holder
    /// without a budget ran it first. So a left section never waits for someone else's call.
    private func leave(_ section: @escaping LeftSection) {
        let first = left.withLock { sections in
            sections.append(section)
            return sections.count == 1
        }
        if first { CallerHandOff.queue.async { self.drainLeftSections() } }
    }

    /// The hand-off queue's drain: takes the lock, runs the sections left (if a holder has not
    /// already), then starts their fetches and does what they decided, here.
    private func drainLeftSections() {
        var starts: [FetchStart] = []
        let then = lock.withLock { state -> [() -> Void] in
            state.lockSections &+= 1
            defer { starts = state.takeFetchStarts() }
            return _runLeftSections(&state)
        }
        for start in starts { start.run() }
        for step in then { step() }
    }

    /// Runs the left sections, oldest first, and returns what each decided to do after the lock.
    private func _runLeftSections(_ state: inout ManagerState) -> [() -> Void] {
        let sections = left.withLock { sections -> [LeftSection] in
            defer { sections.removeAll() }
            return sections
        }
        return sections.map { $0(&state) }
    }
}

extension ManagerState {
    /// The fetches the locked code decided to start, taken out of the state.
    mutating func takeFetchStarts() -> [FetchStart] {
        guard !fetchStarts.isEmpty else { return [] }
        defer { fetchStarts.removeAll() }
        return fetchStarts
    }
}
