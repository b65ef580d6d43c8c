/// What `manage` decided but does not do on its caller's thread, done on the engine's workers
/// instead: creating the tasks of the loads it starts, cancelling the loads it pushed
/// out of the loading buffer, releasing what it evicted or swept, and what the sections left by
/// budgeted callers decided (`ManagerLock`).
///
/// Why: each of these wakes or waits for another thread (a task's executor, the cancelled task's
/// cancellation handlers, which close its download's file and hand its `URLSessionTask` to the
/// session's delegate queue) or frees memory. On a busy machine a woken thread can take the
/// caller's CPU. In a scheduler trace of `manage-latency`, cancelling pushed-out loads and
/// creating tasks on the calling thread were where it was preempted most inside `manage`. One
/// hop per call carries them all.
struct CallerHandOff {
    /// The engine's workers, like the loading executor: what it runs never blocks for long, and
    /// may run side by side.
    static let queue = EngineThreads.workers

    var starts: [FetchStart] = []
    var cancellations: [FetchTaskSlot] = []
    /// Objects to release there: values evicted from the memory cache, handlers and records a
    /// sweep took out of the tables.
    var released: [any Sendable] = []
    var retired: [AnyObject] = []
    /// What sections left by budgeted callers decided, in the order they ran.
    var then: [() -> Void] = []

    var isEmpty: Bool {
        starts.isEmpty && cancellations.isEmpty && released.isEmpty && retired.isEmpty && then.isEmpty
    }

    /// Queues it all on the workers, in one job (nothing when empty).
    consuming func send() {
        guard !isEmpty else { return }
        let parcel = Parcel(self)
        Self.queue.async { parcel.open() }
    }

    /// The hand-off across threads.
    ///
    /// `@unchecked Sendable`, and why that is safe: a `Parcel` is made by the thread that decided
    /// its contents and handed to the workers at once; that thread keeps no reference to it or to
    /// the closures and objects inside (they were made for this hand-off, under the manager's
    /// lock, and the state no longer holds them). From then on, the one job is the only
    /// code that reaches them, once. `starts` and `cancellations` are `Sendable` themselves; the
    /// non-`Sendable` parts are `then` (closures that touch only what they captured) and
    /// `retired` (objects only released).
    private final class Parcel: @unchecked Sendable {
        private var contents: CallerHandOff?

        init(_ contents: consuming CallerHandOff) {
            self.contents = contents
        }

        func open() {
            guard let contents = contents.take() else { return }
            for slot in contents.cancellations { slot.cancel() }
            for start in contents.starts { start.run() }
            for step in contents.then { step() }
            // `released` and `retired` go with `contents`, here.
        }
    }
}
