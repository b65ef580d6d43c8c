import Foundation

/// Carries out what the core decided (`PendingWork`) once the manager's lock is released: waits
/// for a callback of a replaced attachment, hands the caller's extra work off its thread, cancels
/// fetches, purges the file cache, reports events and makes the callbacks, each as its user's
/// delivery says and only if it is still current.
///
/// Owned by its manager alone: a callback queued for the main queue holds it weakly, so one that
/// runs after the manager has gone is dropped (its users were told `.managerShutDown`).
final class WorkPerformer: Sendable {
    let state: ManagerLock
    let core: LoadCore
    let fileCache: (any FileCaching)?
    let eventHandler: (@Sendable (ManagerEvent) -> Void)?
    let afterDeliveryCheck: (@Sendable (UserEvent) -> Void)?
    let manageLockWaitBudget: Double

    init(state: ManagerLock, core: LoadCore) {
        self.state = state
        self.core = core
        fileCache = core.configuration.fileCache
        eventHandler = core.configuration.eventHandler
        afterDeliveryCheck = core.configuration.afterDeliveryCheck
        manageLockWaitBudget = core.configuration.manageLockWaitBudget
    }

    /// Makes the callbacks and disk work collected under the lock. Deliveries to `synchronousUser`
    /// happen on this thread (used inside `manage`, so a hit arrives before it returns) when its
    /// delivery allows: always for `.immediate`, on the main queue for `.mainQueue`. Every other
    /// delivery is made as its user's delivery says, after a check that it is still current.
    ///
    /// `handingOff`: inside `manage`, the fetches its section decided to start. They, the
    /// cancellations and the objects to release are then handed off this thread, in one hop
    /// (`CallerHandOff`), instead of done here.
    func perform(_ work: PendingWork, synchronousUser: ObjectIdentifier? = nil, handingOff starts: [FetchStart]? = nil) {
        var work = work
        // First: a callback for the user's previous attachment, running on another thread, ends
        // before the `manage` or `unmanage` that replaced it returns or delivers anything.
        work.deliveryInFlight?.awaitDeliveryInFlight()
        if let starts {
            var handOff = CallerHandOff(starts: starts)
            work.moveOffTheCaller(into: &handOff)
            handOff.send()
        }
        work.cancellations?.cancelAll()
        if work.sweepsTables { CallerHandOff.queue.async { [weak self] in self?.sweepTablesInBackground() } }
        for dataKey in work.fileCachePurges { fileCache?.removeEntry(forKey: dataKey) }
        if let handler = eventHandler {
            for event in work.events { handler(event) }
            for delivery in work.deliveries {
                guard case .ready(_, let origin, .stale(let error)) = delivery.event else { continue }
                handler(.staleObjectDelivered(key: delivery.key, origin: origin, revalidationError: error))
            }
        }
        for delivery in work.deliveries {
            let link = delivery.user
            if let synchronousUser, link.userID == synchronousUser,
                link.delivery == .immediate || MainQueue.isCurrent
            {
                // Decided a moment ago on this very thread, inside `manage`: no re-check needed.
                link.deliver(delivery.event, request: delivery.request)
            } else {
                switch link.delivery {
                case .immediate:
                    deliverIfCurrent(delivery)
                case .mainQueue:
                    DispatchQueue.main.async { [weak self] in self?.deliverIfCurrent(delivery) }
                }
            }
        }
    }

    /// Runs `section` under the lock and performs its work. For a later section of a `manage`
    /// call (`synchronousUser` given: delivering a file-cache hit read on its thread, or starting
    /// the load after a miss there), within the lock's wait budget (`lockWait`, default
    /// `Configuration.manageLockWaitBudget`), with that user's deliveries on this thread and the rest handed
    /// off; past the budget, left to the lock's holder and performed in the background (see
    /// `ManagerLock`). Otherwise (a background read), waiting as long as it takes.
    func performSection(
        _ section: @escaping @Sendable (inout ManagerState) -> PendingWork, synchronousUser: ObjectIdentifier?,
        lockWait: Double? = nil
    ) {
        guard let synchronousUser else {
            perform(state.withLock { section(&$0) })
            return
        }
        let ran = state.withLock(
            waitingAtMost: lockWait ?? manageLockWaitBudget, { section(&$0) },
            otherwise: {
                { state in
                    state.statistics.deferredCalls += 1
                    let work = section(&state)
                    return { self.perform(work) }
                }
            })
        guard let ran else { return }
        perform(ran.result, synchronousUser: synchronousUser, handingOff: ran.starts)
    }

    /// Records a decode's outcome (`LoadCore._completeDecode`). `countingFileCacheHit`: the bytes
    /// were a file-cache hit, counted in `statistics` whatever the outcome.
    func completeDecode(
        _ job: DecodeJob, outcome: Result<any Sendable, ManagedCacheError>, synchronousUser: ObjectIdentifier? = nil,
        countingFileCacheHit: Bool = false
    ) {
        let now = core.configuration.failureClock()
        let section: @Sendable (inout ManagerState) -> PendingWork = { [core] state in
            core.decide(.decodeFinished(job, outcome, countingFileCacheHit: countingFileCacheHit), at: now, in: &state).work
        }
        performSection(section, synchronousUser: synchronousUser)
    }

    /// Loads `job`'s key again, as after a file-cache miss, when the file-cache bytes it decoded
    /// turned out unusable (a bad variant, an entry whose file vanished) and its handler still
    /// waits for that decode.
    func loadAfterUnusableFileCacheEntry(_ job: DecodeJob) {
        let now = core.configuration.failureClock()
        perform(state.withLock { core.decide(.fileLookupMissed(job.key, generation: job.generation), at: now, in: &$0).work })
    }

    /// Calls the user unless it has been released, re-managed or unmanaged since the delivery
    /// was decided, checking the user's record alone (`Attachment.currency`), not the manager's
    /// lock: progress and previews are also dropped once the user's final callback is decided.
    private func deliverIfCurrent(_ delivery: PendingDelivery) {
        guard let currency = delivery.currency else {
            delivery.user.deliver(delivery.event, request: delivery.request)
            return
        }
        currency.deliver(ifCurrent: delivery.attachment, beforeFinal: delivery.fetch != nil) {
            afterDeliveryCheck?(delivery.event)
            delivery.user.deliver(delivery.event, request: delivery.request)
        }
    }

    /// Runs the sweep an `_attach` scheduled, on the hand-off queue: `TableSweep.budget` entries
    /// per acquisition of the lock, so that a `manage` caller waits at most one short section, and
    /// what each section takes out of the tables is freed after it.
    func sweepTablesInBackground() {
        var finished = false
        while !finished {
            let now = core.configuration.failureClock()
            let step = state.withLock { core.decide(.sweepStep, at: now, in: &$0) }
            finished = step.sweepFinished
        }
    }
}

// MARK: - The work decided under the lock

/// Work decided under the lock and done after releasing it.
struct PendingWork {
    var deliveries: [PendingDelivery] = []
    var fileCachePurges: [String] = []
    var events: [ManagerEvent] = []
    /// Values evicted from caches, released outside the lock.
    var released: [any Sendable] = []
    /// Handlers and user records a sweep took out of the tables, deallocated outside the lock
    /// (with whatever only they held: a handler's object, its users' records and links). Freeing
    /// them inside it was 40 % of a sweep step's time, itself half of `_attach`'s.
    var retired: [AnyObject] = []
    /// Fetch tasks to cancel, outside the lock: cancelling runs the task's cancellation handlers,
    /// which close the download's file and cancel its `URLSessionTask` (on Linux handed to the
    /// session's delegate queue, `SessionDelegate.cancel(_:)`). The fetch has already left the table, so
    /// nothing waits for it in between, and whatever it reports after is ignored (its identifier
    /// is gone).
    /// Made on the first cancellation only (most work has none).
    private(set) var cancellations: TaskCancellations?
    /// Whether the section scheduled the background sweep of the tables (`TableSweep`): `perform`
    /// queues it.
    var sweepsTables = false

    var isEmpty: Bool {
        deliveries.isEmpty && fileCachePurges.isEmpty && events.isEmpty && released.isEmpty && retired.isEmpty
            && cancellations == nil && !sweepsTables
    }

    /// A user's record whose attachment the section replaced or ended while a callback for the
    /// old one ran on another thread: `perform` waits for that callback before anything else, so
    /// the `manage` or `unmanage` that made the section returns only once it is over (see
    /// `AttachmentCurrency`). Kept in `cancellations`' object, made only then: one more stored
    /// property here made every `manage` memory hit copy and destroy this struct through its
    /// value witnesses (6 % more instructions in the `manage-hit` benchmark).
    var deliveryInFlight: AttachmentCurrency? {
        get { cancellations?.deliveryInFlight }
        set {
            if cancellations == nil { cancellations = TaskCancellations() }
            cancellations?.deliveryInFlight = newValue
        }
    }

    mutating func append(_ other: PendingWork) {
        // Most work merged under the lock is empty (a detach that cancels nothing): five
        // `append(contentsOf:)` calls on empty arrays were 7 % of a `manage` memory hit.
        guard !other.isEmpty else { return }
        Self.merge(other.deliveries, into: &deliveries)
        Self.merge(other.fileCachePurges, into: &fileCachePurges)
        Self.merge(other.events, into: &events)
        Self.merge(other.released, into: &released)
        Self.merge(other.retired, into: &retired)
        if let theirs = other.cancellations {
            if let mine = cancellations { mine.take(theirs) } else { cancellations = theirs }
        }
        sweepsTables = sweepsTables || other.sweepsTables
    }

    /// Appends `theirs` to `mine`; takes it whole (no copy, no allocation) when `mine` is empty,
    /// which it usually is.
    private static func merge<Element>(_ theirs: [Element], into mine: inout [Element]) {
        if mine.isEmpty {
            mine = theirs
        } else if !theirs.isEmpty {
            mine += theirs
        }
    }

    /// Moves what the caller of `manage` does not do on its own thread into `handOff`: the
    /// cancellations and, when there is a hop to make anyway (fetches to start, loads to
    /// cancel), the objects to release (see `CallerHandOff`). Not a hop for releasing alone: a
    /// re-managed cell drops its old handler on almost every call, and a dispatch block per call
    /// cost more than freeing the handler here, after the lock (`manage-hit`: 1.8 µs a call
    /// became 4.0 µs).
    mutating func moveOffTheCaller(into handOff: inout CallerHandOff) {
        if let cancellations {
            handOff.cancellations += cancellations.takeAll()
            // Stopped preloads, if any, are cancelled here as the object goes (its `deinit`):
            // a preload has no cancellation handler, so that costs the caller nothing.
            self.cancellations = nil
        }
        guard !handOff.isEmpty else { return }
        Self.merge(released, into: &handOff.released)
        Self.merge(retired, into: &handOff.retired)
        released = []
        retired = []
    }

    /// Queues the fetch task of `slot` to be cancelled once the lock is released.
    mutating func cancel(_ task: FetchTaskSlot) {
        if cancellations == nil { cancellations = TaskCancellations() }
        cancellations?.add(task)
    }

    /// Queues preload tasks to be cancelled once the lock is released.
    mutating func cancel(preloads: [Task<Int, Never>]) {
        if cancellations == nil { cancellations = TaskCancellations() }
        cancellations?.add(preloads: preloads)
    }
}

/// Tasks a `PendingWork` is to cancel once the manager's lock is released, and the callback
/// it is to wait for first (`PendingWork.deliveryInFlight`).
///
/// A class, so that no cancellation can be lost: a `PendingWork` dropped without being performed
/// (a path that decided work and returned early) still cancels its tasks when the last copy goes
/// away, later than `perform` would, but never not at all.
final class TaskCancellations {
    private var tasks: [FetchTaskSlot] = []
    /// File-cache preloads stopped because a request needs the disk.
    private var preloads: [Task<Int, Never>] = []
    /// See `PendingWork.deliveryInFlight`.
    var deliveryInFlight: AttachmentCurrency?

    func add(_ task: FetchTaskSlot) { tasks.append(task) }

    func add(preloads more: [Task<Int, Never>]) { preloads += more }

    /// Moves `other`'s tasks (and the callback it waits for) here.
    func take(_ other: TaskCancellations) {
        tasks += other.tasks
        other.tasks.removeAll()
        preloads += other.preloads
        other.preloads.removeAll()
        if let theirs = other.deliveryInFlight { deliveryInFlight = theirs }
    }

    /// Takes every task out, to cancel elsewhere.
    func takeAll() -> [FetchTaskSlot] {
        defer { tasks.removeAll() }
        return tasks
    }

    /// Cancels every task now.
    func cancelAll() {
        let cancelling = tasks
        let stopping = preloads
        tasks.removeAll()
        preloads.removeAll()
        for task in cancelling { task.cancel() }
        for task in stopping { task.cancel() }
    }

    deinit {
        for task in tasks { task.cancel() }
        for task in preloads { task.cancel() }
    }
}

// MARK: - What manage hands off its caller's thread

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
