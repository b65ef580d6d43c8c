import Foundation

/// Everything an `ObjectManager` knows, guarded by its one lock. Methods that start with `_`
/// run under that lock and must not call out to users, loaders or the disk; they collect the
/// work to do afterwards in a `PendingWork`.
struct ManagerState {
    var handlers: [ObjectKey: ObjectHandler] = [:]
    var fetches: [String: FetchRecord] = [:]
    var attachments: [UserKey: Attachment] = [:]
    /// The currencies of `attachments`' records, reachable without this lock (see
    /// `AttachmentCurrencies`); kept in step with `attachments` by `_insertAttachment` and
    /// `_removeAttachment`.
    let currencies: AttachmentCurrencies
    var loadingBuffer: LoadingBuffer
    var prefetchQueue = PrefetchQueue()
    /// The reporting prefetches waiting for outcomes (`prefetchAndWait`, `prefetch(…completion:)`).
    var prefetchWatch = PrefetchWatch()
    var runningPrefetches = 0
    var failures: FailureMemory
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
        currencies: AttachmentCurrencies = AttachmentCurrencies(), refusalHints: RefusalHints = RefusalHints()
    ) {
        loadingBuffer = LoadingBuffer(capacity: loadingBufferSize, pushOut: pushOut)
        self.currencies = currencies
        failures = FailureMemory(hints: refusalHints)
    }

    /// Puts `record` in the table of users, as its user's.
    mutating func _insertAttachment(_ record: Attachment) {
        attachments[UserKey(record.userID)] = record
        currencies.register(record)
    }

    /// Takes the record of `userID` out of the table of users and retires it.
    mutating func _removeAttachment(of userID: ObjectIdentifier) -> Attachment? {
        guard let record = attachments.removeValue(forKey: UserKey(userID)) else { return nil }
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

// MARK: - The table of users' key

/// A user's identity as the key of the table of users (`ManagerState.attachments`), hashed
/// without a `Hasher`: `ObjectIdentifier`'s own hash runs SipHash over the address on every
/// lookup, a twentieth of a `manage` memory hit, where an object's address needs only spreading
/// over the table's buckets. Addresses are not chosen by anyone who could aim at one bucket.
struct UserKey: Hashable {
    let identifier: ObjectIdentifier

    init(_ identifier: ObjectIdentifier) {
        self.identifier = identifier
    }

    /// The address through a 64-bit finalizer (two multiplications, three shifts: every bit of
    /// the address reaches the low bits the table's buckets read, which an address alone leaves
    /// zero), mixed with the table's seed.
    func _rawHashValue(seed: Int) -> Int {
        var bits = UInt64(UInt(bitPattern: Int(bitPattern: identifier)))
        bits ^= bits >> 33
        bits &*= 0xFF51_AFD7_ED55_8CCD
        bits ^= bits >> 33
        bits &*= 0xC4CE_B9FE_1A85_EC53
        bits ^= bits >> 33
        return Int(truncatingIfNeeded: bits) ^ seed
    }
}

// MARK: - The sweep of the tables

/// The manager's sweep of its handler and attachment tables, in the background beside `manage`.
///
/// What it removes: handlers nobody uses that are not loading and not held by a prefetch (users
/// released without `unmanage`, as views are, leave them behind), and the records of deallocated
/// users; in the handlers it keeps, the records of deallocated users. It keeps idle the handlers
/// nobody uses whose key the memory cache holds (`LoadCore._idleIfTheMemoryCacheHoldsItsObject`):
/// they hold no object, and the key's next memory hit finds them. So the handler table is bounded
/// by the users alive plus the memory cache's entries. Without it, such users would
/// pile up in a handler's list and in the side table while the handler table stays small.
///
/// When: once either table reaches 3/4 of the threshold (twice the larger table's size when the
/// last sweep ended, at least 64), counting the records of deallocated users replaced in the side
/// table since the sweep began: records in handlers' lists are at most those in the side table
/// plus those replaced in it, so bounding the sum bounds the lists, however the allocator reuses
/// addresses. The low floor bounds how many objects of silently deallocated users a handler can
/// keep alive beyond the memory cache's limits.
///
/// Where, so that no `manage` pays for a whole sweep: the `_attach` that finds a sweep due only schedules it (`isScheduled`); the
/// sweep runs on the hand-off queue (`ObjectManager.sweepTablesInBackground()`), `budget` entries
/// per acquisition of the lock, each section a few microseconds. It used to run inside `manage`:
/// first all at once (70–100 µs sections in `manage-latency`), then `budget` entries per call. Even
/// spread out, it was about a fifth of a load start's median on the calling thread (0.012–0.017 ms
/// without it in a scratch build, against 0.016–0.021 ms in the runs around it), and the longer a
/// call, the likelier a preemption stretches it past a frame's share.
///
/// The bound still holds when the background falls behind (a starved utility thread): once the
/// tables reach 7/8 of the threshold, where the sweep used to begin, every `_attach` also
/// examines `budget` entries itself until the sweep ends, as all did before. Starting the
/// background sweep earlier, at 3/4, keeps that rare.
///
///     idle ──a table at 3/4 of the threshold: schedule──▶ scheduled
///       ▲                                                   │ background section: take a snapshot
///       │                                                   ▼  of the keys, examine `budget`
///       │                                            sweeping(keys to examine) ◀─┐ each section
///       │                                                   │ (and each `_attach`,│ examines
///       │                                                   │  from 7/8 on)       │ `budget`
///       └── all examined: threshold = max(64, 2 × larger table) ◀─────────────────┘
struct TableSweep {
    /// The smallest threshold.
    static let floor = 64
    /// Entries examined per section of the background sweep, and per `_attach` while it is behind.
    static let budget = 8

    /// Twice the larger table's size when the last sweep ended (at least `floor`).
    private(set) var threshold = floor
    /// Records of deallocated users replaced in the side table (left in their handlers' lists)
    /// since the sweep under way, or the last one, began.
    var replacedRecords = 0
    /// Whether a background sweep is queued or running (set by `_scheduleSweepIfDue`, cleared by
    /// the background sweep when it finds nothing left to examine).
    private(set) var isScheduled = false
    /// Whether `_attach` calls help the sweep under way: from the first that found the tables at
    /// 7/8 of the threshold until the sweep ends, each examines `budget` entries, as they all did
    /// before the background sweep.
    private(set) var isHelped = false
    /// The keys of the sweep under way still to examine; both empty when no sweep runs.
    private var handlersToExamine: [ObjectKey] = []
    private var attachmentsToExamine: [UserKey] = []

    /// Whether a sweep is under way: some of its keys are still to examine.
    var isSweeping: Bool { !hasExaminedAll }

    /// Whether tables of these sizes call for a sweep (3/4 of the threshold).
    func isDue(handlers: Int, attachments: Int) -> Bool {
        reaches(threshold - threshold / 4, handlers: handlers, attachments: attachments)
    }

    /// Whether tables of these sizes call for `_attach` to sweep too (7/8 of the threshold): the
    /// background has fallen behind.
    func isBehind(handlers: Int, attachments: Int) -> Bool {
        reaches(threshold - threshold / 8, handlers: handlers, attachments: attachments)
    }

    private func reaches(_ size: Int, handlers: Int, attachments: Int) -> Bool {
        handlers >= size || attachments + replacedRecords >= size
    }

    /// Idle → scheduled.
    mutating func schedule() { isScheduled = true }

    /// From now until the sweep under way ends, every `_attach` examines `budget` entries.
    mutating func beginHelping() { isHelped = true }

    /// Scheduled → idle: the background sweep found nothing left to examine.
    mutating func unschedule() { isScheduled = false }

    /// Idle or scheduled → sweeping the entries of these keys.
    mutating func begin(handlers: [ObjectKey], attachments: [UserKey]) {
        handlersToExamine = handlers
        attachmentsToExamine = attachments
        replacedRecords = 0
    }

    /// The next handler key to examine, if any.
    mutating func nextHandler() -> ObjectKey? { handlersToExamine.popLast() }

    /// The next attachment to examine, if any.
    mutating func nextAttachment() -> UserKey? { attachmentsToExamine.popLast() }

    /// Whether every key of the sweep under way has been examined.
    var hasExaminedAll: Bool { handlersToExamine.isEmpty && attachmentsToExamine.isEmpty }

    /// Sweeping → idle (or scheduled, until the background sees it ended), with the tables'
    /// sizes now.
    mutating func end(handlers: Int, attachments: Int) {
        threshold = max(Self.floor, 2 * max(handlers, attachments))
        isHelped = false
    }
}
