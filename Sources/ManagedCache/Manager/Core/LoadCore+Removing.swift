import Foundation

extension LoadCore {
    /// The app removed the object of `key` from memory: its handler goes too when it only holds
    /// the object for nobody, or holds nothing (`ObjectHandler.isIdle`, kept for the key's next
    /// memory hit); users still holding the object keep it.
    func _dropIdleHandler(_ key: ObjectKey, in state: inout ManagerState) {
        guard let handler = state.handlers[key], !handler.hasLiveUsers, handler.readyEntry != nil || handler.isIdle else { return }
        state.handlers.removeValue(forKey: key)
    }

    /// The app emptied the memory cache (or memory ran short): every handler with no load under
    /// way and no live user goes. Returns them, for the caller to free after the lock with
    /// whatever objects only they held.
    func _dropIdleHandlers(in state: inout ManagerState) -> [AnyObject] {
        var dropped: [AnyObject] = []
        state.handlers = state.handlers.filter { _, handler in
            let kept = handler.phase.isBusy || handler.hasLiveUsers
            if !kept { dropped.append(handler) }
            return kept
        }
        return dropped
    }

    /// The manager goes away: awaiting prefetches are answered, and every fetch task is returned
    /// to cancel, with a `.cancelled(.managerShutDown)` delivery for each user still waiting for
    /// a load.
    func _shutDown(in state: inout ManagerState) -> ([FetchTaskSlot], [PendingDelivery]) {
        state.isShutDown = true
        state.prefetchWatch.settleAll(.cancelled)
        var deliveries: [PendingDelivery] = []
        for handler in state.handlers.values where handler.phase.isBusy {
            deliveries += handler.deliveries(of: .failed(.cancelled(.managerShutDown)))
        }
        return (state.fetches.values.map(\.task), deliveries)
    }
}
