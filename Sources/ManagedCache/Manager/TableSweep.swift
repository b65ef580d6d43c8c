/// The manager's sweep of its handler and attachment tables, a few entries per `manage`.
///
/// What it removes: handlers nobody uses that are not loading and not held by a prefetch (users
/// released without `unmanage`, as views are, leave them behind), and the records of deallocated
/// users; in the handlers it keeps, the records of deallocated users. Without it, such users would
/// pile up in a handler's list and in the side table while the handler table stays small.
///
/// When: once either table reaches 7/8 of the threshold (twice the larger table's size when the
/// last sweep ended, at least 64), counting the records of deallocated users replaced in the side
/// table since the sweep began: records in handlers' lists are at most those in the side table
/// plus those replaced in it, so bounding the sum bounds the lists, however the allocator reuses
/// addresses. The low floor bounds how many objects of silently deallocated users a handler can
/// keep alive beyond the memory cache's limits.
///
/// Why a few entries at a time (issue 20): the sweep used to filter both tables at once, inside
/// the `manage` call that found them past the threshold and under the lock every `manage` takes.
/// In the `manage-latency` benchmark those sweeps held the lock 70–100 µs for tables of 20–90
/// entries (up to 1.2 ms when the holder was preempted), and they were among the longest sections
/// other threads' `manage` calls waited for. Now a sweep takes a snapshot of the keys (a copy,
/// ~10 ns an entry) and each `manage` that attaches a user examines at most `budget` of them.
/// Starting at 7/8 of the threshold leaves room for what is attached while the sweep runs
/// (at most one entry per `budget` examined), so the tables stay within about twice what is alive,
/// as before.
///
///     idle ──a table at 7/8 of the threshold──▶ sweeping(keys to examine)
///       ▲                                           │ each `_attach`: examine up to `budget`
///       └── all examined: threshold = max(64, 2 × larger table) ◀┘
struct TableSweep {
    /// The smallest threshold.
    static let floor = 64
    /// Entries examined per `manage` that attaches a user, while a sweep runs.
    static let budget = 8

    /// Twice the larger table's size when the last sweep ended (at least `floor`).
    private(set) var threshold = floor
    /// Records of deallocated users replaced in the side table (left in their handlers' lists)
    /// since the sweep under way, or the last one, began.
    var replacedRecords = 0
    /// The keys of the sweep under way still to examine; both empty when no sweep runs.
    private var handlersToExamine: [ObjectKey] = []
    private var attachmentsToExamine: [ObjectIdentifier] = []

    /// Whether a sweep is under way: some of its keys are still to examine.
    var isSweeping: Bool { !hasExaminedAll }

    /// Whether tables of these sizes call for a sweep.
    func isDue(handlers: Int, attachments: Int) -> Bool {
        let start = threshold - threshold / 8
        return handlers >= start || attachments + replacedRecords >= start
    }

    /// Idle → sweeping the entries of these keys.
    mutating func begin(handlers: [ObjectKey], attachments: [ObjectIdentifier]) {
        handlersToExamine = handlers
        attachmentsToExamine = attachments
        replacedRecords = 0
    }

    /// The next handler key to examine, if any.
    mutating func nextHandler() -> ObjectKey? { handlersToExamine.popLast() }

    /// The next attachment to examine, if any.
    mutating func nextAttachment() -> ObjectIdentifier? { attachmentsToExamine.popLast() }

    /// Whether every key of the sweep under way has been examined.
    var hasExaminedAll: Bool { handlersToExamine.isEmpty && attachmentsToExamine.isEmpty }

    /// Sweeping → idle, with the tables' sizes now.
    mutating func end(handlers: Int, attachments: Int) {
        threshold = max(Self.floor, 2 * max(handlers, attachments))
    }
}

extension ManagerState {
    /// Begins a sweep when one is due, and examines up to `TableSweep.budget` entries of the sweep
    /// under way. Called whenever a user is attached anew (see `TableSweep`). Returns the handlers
    /// and records it took out of the tables, to deallocate once the lock is released
    /// (`PendingWork.retired`).
    mutating func _sweepIfNeeded() -> [AnyObject] {
        if !sweep.isSweeping {
            guard sweep.isDue(handlers: handlers.count, attachments: attachments.count) else { return [] }
            sweep.begin(handlers: Array(handlers.keys), attachments: Array(attachments.keys))
        }
        return _sweepStep(budget: TableSweep.budget)
    }

    /// Examines up to `budget` entries of the sweep under way: handlers first, then attachments.
    /// Returns the handlers and records it took out.
    mutating func _sweepStep(budget: Int) -> [AnyObject] {
        var retired: [AnyObject] = []
        var examined = 0
        while examined < budget, let key = sweep.nextHandler() {
            examined += 1
            guard let handler = handlers[key] else { continue }  // dropped since the snapshot
            if handler.phase.isBusy || handler.heldByPrefetch || handler.hasLiveUsers {
                handler.compactUsers()
            } else {
                handlers.removeValue(forKey: key)
                retired.append(handler)
            }
        }
        while examined < budget, let identifier = sweep.nextAttachment() {
            examined += 1
            if attachments[identifier]?.isAlive == false, let record = _removeAttachment(of: identifier) {
                retired.append(record)
            }
        }
        if sweep.hasExaminedAll { sweep.end(handlers: handlers.count, attachments: attachments.count) }
        return retired
    }
}
