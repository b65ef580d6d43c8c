import Foundation

/// Everything an `ObjectManager` knows, guarded by its one lock. Methods that start with `_`
/// run under that lock and must not call out to users, loaders or the disk; they collect the
/// work to do afterwards in a `PendingWork`.
struct ManagerState {
    var handlers: [ObjectKey: ObjectHandler] = [:]
    var fetches: [String: FetchRecord] = [:]
    var attachments: [ObjectIdentifier: Attachment] = [:]
    /// The currencies of `attachments`' records, reachable without this lock (see
    /// `AttachmentCurrencies`); kept in step with `attachments` by `_insertAttachment` and
    /// `_removeAttachment`.
    let currencies: AttachmentCurrencies
    var loadingBuffer: LoadingBuffer
    var prefetchQueue = PrefetchQueue()
    /// The reporting prefetches waiting for outcomes (`prefetchAndWait`, `prefetch(…completion:)`).
    var prefetchWatch = PrefetchWatch()
    var runningPrefetches = 0
    var failures = FailureMemory()
    var statistics = ManagerStatistics()
    var nextIdentifier: UInt64 = 1
    /// The time of the event being decided, on the failure memory's clock: set by
    /// `LoadCore.decide` from what the façade read before the lock, so the core reads no clock.
    var now = MonotonicInstant(nanoseconds: 0)
    /// The sweep of `handlers` and `attachments` (see `TableSweep`).
    var sweep = TableSweep()
    var isShutDown = false
    /// Running preloads, cancelled when a real request needs the disk.
    var preloads: [Task<Int, Never>] = []
    /// Preloads a decision stopped, to cancel once the lock is released (see `LoadCore.decide`).
    var preloadsToCancel: [Task<Int, Never>] = []
    /// The latest stored object still writing to each file key: a later store of the
    /// file key (or a memory-only store of the same object key) closes its gate, so stores land
    /// in the order they were made.
    var pendingStores: [String: PendingStore] = [:]
    /// Fetch tasks to create once the lock is released (`ManagerLock`, `FetchTaskSlot`).
    var fetchStarts: [FetchStart] = []
    /// How many times the lock has been taken (`ManagerLock.sectionCount`): counted here, under
    /// it, so counting costs one addition and no atomic.
    var lockSections: UInt64 = 0

    init(
        loadingBufferSize: Int, pushOut: any LoadingBufferPushOutPolicy = LowestPriorityThenOldest(),
        currencies: AttachmentCurrencies = AttachmentCurrencies()
    ) {
        loadingBuffer = LoadingBuffer(capacity: loadingBufferSize, pushOut: pushOut)
        self.currencies = currencies
    }

    /// Puts `record` in the table of users, as its user's.
    mutating func _insertAttachment(_ record: Attachment) {
        attachments[record.userID] = record
        currencies.register(record)
    }

    /// Takes the record of `userID` out of the table of users and retires it.
    mutating func _removeAttachment(of userID: ObjectIdentifier) -> Attachment? {
        guard let record = attachments.removeValue(forKey: userID) else { return nil }
        record.retire()
        currencies.unregister(record)
        return record
    }

    /// Each load's bytes so far, for the loading buffer's push-out policy: a copy of the fetch
    /// table (so the buffer can be changed while it is read) when the policy reads progress, an
    /// empty one otherwise.
    func _progressForPushOut() -> (ObjectKey) -> LoadProgress {
        let fetches = loadingBuffer.pushOutReadsProgress ? fetches : [:]
        return { fetches[$0.dataKey]?.progress ?? LoadProgress(receivedBytes: 0, expectedBytes: nil) }
    }

    mutating func _makeIdentifier() -> UInt64 {
        defer { nextIdentifier &+= 1 }
        return nextIdentifier
    }
}

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
