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
