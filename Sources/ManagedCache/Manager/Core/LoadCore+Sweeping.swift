import Foundation

extension LoadCore {
    /// Schedules the background sweep when one is due and none is scheduled; `true` when it did
    /// (the caller then queues `ObjectManager.sweepTablesInBackground()`). Called whenever a user
    /// is attached anew (see `TableSweep`): two comparisons when nothing is due.
    func _scheduleSweepIfDue(in state: inout ManagerState) -> Bool {
        guard !state.sweep.isScheduled, state.sweep.isDue(handlers: state.handlers.count, attachments: state.attachments.count) else {
            return false
        }
        state.sweep.schedule()
        return true
    }

    /// The part of the sweep `_attach` still does itself: `TableSweep.budget` entries, once the
    /// tables reached 7/8 of the threshold (the background sweep having fallen behind, or never
    /// run) and until that sweep ends. Returns what it took out of the tables, to deallocate
    /// after the lock.
    func _sweepIfBehind(in state: inout ManagerState) -> [AnyObject] {
        if !state.sweep.isHelped {
            guard state.sweep.isBehind(handlers: state.handlers.count, attachments: state.attachments.count) else { return [] }
            if !state.sweep.isSweeping { _beginSweep(in: &state) }
            state.sweep.beginHelping()
        }
        return _sweepStep(budget: TableSweep.budget, in: &state)
    }

    /// One section of the background sweep: begins the sweep if it has not begun and the tables
    /// still call for it, examines `TableSweep.budget` entries. `finished` when nothing is left
    /// to examine, and the sweep is no longer scheduled.
    func _backgroundSweepStep(in state: inout ManagerState) -> (retired: [AnyObject], finished: Bool) {
        if !state.sweep.isSweeping, state.sweep.isDue(handlers: state.handlers.count, attachments: state.attachments.count) {
            _beginSweep(in: &state)
        }
        guard state.sweep.isSweeping else {
            state.sweep.unschedule()
            return ([], true)
        }
        let retired = _sweepStep(budget: TableSweep.budget, in: &state)
        if !state.sweep.isSweeping { state.sweep.unschedule() }
        return (retired, !state.sweep.isSweeping)
    }

    /// A snapshot of both tables' keys to examine (a copy, ~10 ns an entry).
    private func _beginSweep(in state: inout ManagerState) {
        state.sweep.begin(handlers: Array(state.handlers.keys), attachments: Array(state.attachments.keys))
    }

    /// Whether the sweep keeps `handler`, which no live user needs and has nothing under way:
    /// idle, for its key's next memory hit, while the memory cache holds the key (see
    /// `_idleIfTheMemoryCacheHoldsItsObject`, which idles a ready one whose users were released
    /// without `unmanage`).
    private func _keepsIdle(_ handler: ObjectHandler) -> Bool {
        handler.compactUsers()
        if handler.isIdle { return memoryCache.contains(handler.key) }
        return _idleIfTheMemoryCacheHoldsItsObject(handler)
    }

    /// Examines up to `budget` entries of the sweep under way: handlers first, then attachments.
    /// Returns the handlers and records it took out.
    func _sweepStep(budget: Int, in state: inout ManagerState) -> [AnyObject] {
        var retired: [AnyObject] = []
        var examined = 0
        while examined < budget, let key = state.sweep.nextHandler() {
            examined += 1
            guard let handler = state.handlers[key] else { continue }  // dropped since the snapshot
            if handler.phase.isBusy || handler.heldByPrefetch || handler.hasLiveUsers {
                handler.compactUsers()
            } else if _keepsIdle(handler) {
                continue
            } else {
                state.handlers.removeValue(forKey: key)
                retired.append(handler)
            }
        }
        while examined < budget, let identifier = state.sweep.nextAttachment() {
            examined += 1
            if state.attachments[identifier]?.isAlive == false, let record = state._removeAttachment(of: identifier) {
                retired.append(record)
            }
        }
        if state.sweep.hasExaminedAll { state.sweep.end(handlers: state.handlers.count, attachments: state.attachments.count) }
        return retired
    }
}
