import Foundation

/// Where an `ObjectManager` decides what every event means for its handlers, fetches, loading
/// buffer and users. Each method here runs under the manager's lock (the leading `_`), changes
/// the state in place and returns the work to carry out after the lock (`PendingWork`: deliveries
/// to users, cancellations, purges, events, objects to release) and the fetches to start
/// (`ManagerState.fetchStarts`). None of them calls a user, a loader or the disk, or waits.
///
/// `ObjectManager`'s methods are the façade: each reads what it needs before the lock (a user's
/// properties, the memory cache, the file cache's index), calls one method below under the
/// lock, then performs the returned work (`ObjectManager.perform`).
///
/// `decide(_:in:)` is the one entry: the façade turns each call and each load's report into an
/// `Event`, and gets back a `Decision` (the work, and what else it is to do after the lock). The
/// events, and the method `decide` hands each to:
///
/// | Event | Decided by | Section of this file |
/// | --- | --- | --- |
/// | `manage`: `manage`, nothing in memory | `_attachAndDecide` | Attaching users |
/// | `unloadable`: `manage` of a request nothing can load | `_answerUnloadable` | Attaching users |
/// | `unmanage`, or a user re-managed for another key | `_detach(userID:)` | Attaching users |
/// | `fileLookupMissed`: a miss, or an unusable entry | `_fileLookupMissed` | Loading |
/// | `fetchUsersReleased`: a progress report found a user released | `_fetchUsersReleased` | Loading |
/// | `loadingBufferResized` | `_resizeLoadingBuffer` | Loading |
/// | `fetchFinished`: bytes (decoded on the fetch's task, most often), a `304`, a failure | `_fetchFinished` | Finishing fetches and decodes |
/// | `decodeFinished` (a file-cache hit's too) | `_completeDecode` | Finishing fetches and decodes |
/// | `objectStored`, `storeStarted`, `storeMade`, `storeWritten` | `_storeObject`, `_startStoring`, `_finishStoring`, `_endPendingStore` | Storing |
/// | `prefetch`, `prefetchCancelled` | `_enqueuePrefetches`, `_cancelPrefetching` | Prefetching |
/// | `cancelAll` | `_cancelAll` | Prefetching |
/// | `objectRemoved`, `memoryEmptied` (remove all, memory pressure) | `_dropIdleHandler`, `_dropIdleHandlers` | Removing and shutting down |
/// | `shutDown`: the manager deallocated | `_shutDown` | Removing and shutting down |
/// | `sweepStep`: the background sweep of the tables | `_backgroundSweepStep` | Sweeping the tables |
/// | a remembered failure expiring | `FailureMemory`, asked by the next `manage` or prefetch | Attaching users |
///
/// One event does not go through `decide`: a `manage` whose object is in memory calls
/// `_memoryHit` (Attaching users) directly. It is the hot path (a cell re-managed on every
/// scroll step), and through `decide` it cost a quarter more instructions per call in the
/// `manage-hit` benchmark under callgrind: the event's payload retained and released, the
/// `Decision` copied through value witnesses, the user's link made in an escaping closure.
///
/// The handler's phases, and the transitions these methods choose among, are on
/// `ObjectHandler`; a fetch's records are `FetchRecord`s (`Fetch.swift`). Only these methods call a handler's
/// transitions and change its users, request or policy. `LoadCoreTableTests` drive them with a
/// state and an event, without a manager.
///
/// A value of `let`s, copied into the manager once: its caches are references, so the core
/// changes the same memory cache the manager reads before its lock.
struct LoadCore: Sendable {
    /// The decoded objects, by key (`ObjectManager.memoryCache`).
    let memoryCache: MemoryCache<ObjectKey, CachedObject>
    /// Bytes nobody decoded yet and no file holds (`ObjectManager.undecodedData`).
    let undecodedData: MemoryCache<String, Data>
    /// The manager's configuration: policies, limits, the failure memory's clock.
    let configuration: ObjectManager.Configuration
    /// Whether the manager has a file cache to look in before loading.
    let hasFileCache: Bool
    /// Makes the tasks of the fetches the core starts.
    let fetchRunner: FetchRunner
}

extension LoadCore {
    /// Everything the engine reacts to, with what the façade read before the lock.
    enum Event {
        /// `manage` with nothing fresh in memory (`stale`: an object past its freshness);
        /// `knownFileMiss`: the file cache's index certainly lacks the bytes.
        case manage(
            ManageCall, key: ObjectKey, policy: LoadPolicy, decoder: AnyObjectDecoder, stale: CachedObject?,
            link: @Sendable () -> any UserLink, knownFileMiss: Bool, deferred: Bool)
        /// `manage` of a request nothing can load, for `reason`.
        case unloadable(ManageCall, key: ObjectKey, reason: String, link: @Sendable () -> any UserLink)
        /// `unmanage`, or a main-actor user's `unmanage`.
        case unmanage(ObjectIdentifier)
        /// The file-cache lookup of generation `generation` found nothing usable.
        case fileLookupMissed(ObjectKey, generation: UInt64)
        /// A progress report of the fetch found a user of it released (`FetchAudience`).
        case fetchUsersReleased(dataKey: String, fetch: UInt64)
        /// `decoded`: the objects the fetch's task decoded from the bytes before the lock, by
        /// handler key. `now`: for stale-if-error.
        case fetchFinished(
            dataKey: String, fetch: UInt64, Result<FetchedData, ManagedCacheError>,
            decoded: [ObjectKey: Result<any Sendable, ManagedCacheError>], now: Date)
        case decodeFinished(DecodeJob, Result<any Sendable, ManagedCacheError>, countingFileCacheHit: Bool)
        case loadingBufferResized(Int)
        case objectStored(any Sendable, StorePlan, cost: Int)
        case storeStarted(StorePlan, ObjectRequest, AnyObjectDecoder)
        case storeMade(Result<any Sendable, StoreError>, StorePlan, cost: Int, generation: UInt64)
        case storeWritten(WriteGate, fileKey: String)
        /// `unloadable[i]`: why request `i` cannot load, if it cannot.
        case prefetch([ObjectRequest], unloadable: [String?], AnyObjectDecoder?, LoadPriority, PrefetchBatch?)
        case prefetchCancelled(matching: (String) -> Bool)
        case cancelAll
        case objectRemoved(ObjectKey)
        case memoryEmptied
        case shutDown
        case sweepStep
    }

    /// What the façade does once the lock is released: `work`, and for some events one more step
    /// (`next`), one case per kind of event that has one.
    struct Decision {
        var work = PendingWork()
        var next = Next.none

        /// The step after the work that an event's decision adds.
        enum Next {
            case none
            /// `manage`: the file cache is read next.
            case fileLookup(FileLookup)
            /// `fetchFinished`: the decodes to run and the variants to store, on the fetch's task.
            case fetchEnd(FetchEnd)
            /// `unloadable`: the call was answered (otherwise the key's handler answers it like any other).
            case answeredAsUnloadable
            /// `objectStored`, `storeStarted`: what the store's write waits for, and the
            /// generation the made object is for.
            case store(StoreTicket, generation: UInt64)
            /// `storeMade`: whether the key still waited for the object.
            case storeMade(isCurrent: Bool)
            /// `shutDown`: every fetch task to cancel, and the deliveries to make without a check.
            case shutDown(tasksToCancel: [FetchTaskSlot], deliveries: [PendingDelivery])
            /// `sweepStep`: whether nothing is left to sweep.
            case sweepStep(finished: Bool)
        }

        var fileLookup: FileLookup? {
            if case .fileLookup(let lookup) = next { lookup } else { nil }
        }
        var fetchEnd: FetchEnd {
            if case .fetchEnd(let end) = next { end } else { FetchEnd() }
        }
        var answeredAsUnloadable: Bool {
            if case .answeredAsUnloadable = next { true } else { false }
        }
        var ticket: StoreTicket {
            if case .store(let ticket, _) = next { ticket } else { StoreTicket() }
        }
        var generation: UInt64 {
            if case .store(_, let generation) = next { generation } else { 0 }
        }
        var isCurrent: Bool {
            if case .storeMade(let isCurrent) = next { isCurrent } else { false }
        }
        var tasksToCancel: [FetchTaskSlot] {
            if case .shutDown(let tasks, _) = next { tasks } else { [] }
        }
        var unconditionalDeliveries: [PendingDelivery] {
            if case .shutDown(_, let deliveries) = next { deliveries } else { [] }
        }
        var sweepFinished: Bool {
            if case .sweepStep(let finished) = next { finished } else { false }
        }
    }

    /// Decides `event`, which happened at `now` (on the failure memory's clock,
    /// `Configuration.failureClock`), on `state` (under the manager's lock): changes the state,
    /// and returns what to do after the lock. The one way the façade asks the core anything.
    @inline(__always)
    func decide(_ event: Event, at now: MonotonicInstant, in state: inout ManagerState) -> Decision {
        state.now = now
        var decision = Decision()
        switch event {
        case .manage(let call, let key, let policy, let decoder, let stale, let link, let knownFileMiss, let deferred):
            if deferred { state.statistics.deferredCalls += 1 }
            var lookup: FileLookup?
            decision.work = _attachAndDecide(
                call, key: key, policy: policy, decoder: decoder, stale: stale, link: link, knownFileMiss: knownFileMiss,
                fileLookup: &lookup, in: &state)
            if let lookup { decision.next = .fileLookup(lookup) }
        case .unloadable(let call, let key, let reason, let link):
            if let work = _answerUnloadable(call, key: key, reason: reason, link: link, in: &state) {
                decision.work = work
                decision.next = .answeredAsUnloadable
            }
        case .unmanage(let userID):
            decision.work = _detach(userID: userID, in: &state)
        case .fileLookupMissed(let key, let generation):
            decision.work = _fileLookupMissed(key, generation: generation, in: &state)
        case .fetchUsersReleased(let dataKey, let fetch):
            decision.work = _fetchUsersReleased(dataKey: dataKey, fetch: fetch, in: &state)
        case .fetchFinished(let dataKey, let fetch, let result, let decoded, let now):
            let (work, end) = _fetchFinished(dataKey: dataKey, fetch: fetch, result: result, decoded: decoded, now: now, in: &state)
            (decision.work, decision.next) = (work, .fetchEnd(end))
        case .decodeFinished(let job, let outcome, let countingFileCacheHit):
            decision.work = _completeDecode(job, outcome: outcome, countingFileCacheHit: countingFileCacheHit, in: &state)
        case .loadingBufferResized(let capacity):
            decision.work = _resizeLoadingBuffer(to: capacity, in: &state)
        case .objectStored(let object, let plan, let cost):
            let (work, ticket) = _storeObject(object, plan: plan, cost: cost, in: &state)
            (decision.work, decision.next) = (work, .store(ticket, generation: 0))
        case .storeStarted(let plan, let request, let decoder):
            let (work, ticket, generation) = _startStoring(plan, request: request, decoder: decoder, in: &state)
            (decision.work, decision.next) = (work, .store(ticket, generation: generation))
        case .storeMade(let made, let plan, let cost, let generation):
            let (work, isCurrent) = _finishStoring(made, plan: plan, cost: cost, generation: generation, in: &state)
            (decision.work, decision.next) = (work, .storeMade(isCurrent: isCurrent))
        case .storeWritten(let gate, let fileKey):
            _endPendingStore(gate, fileKey: fileKey, in: &state)
        case .prefetch(let requests, let unloadable, let decoder, let priority, let batch):
            decision.work = _enqueuePrefetches(
                requests, unloadable: unloadable, decoder: decoder, priority: priority, batch: batch, in: &state)
        case .prefetchCancelled(let matches):
            decision.work = _cancelPrefetching(where: matches, in: &state)
        case .cancelAll:
            decision.work = _cancelAll(in: &state)
        case .objectRemoved(let key):
            _dropIdleHandler(key, in: &state)
        case .memoryEmptied:
            decision.work.retired = _dropIdleHandlers(in: &state)
        case .shutDown:
            let (tasks, deliveries) = _shutDown(in: &state)
            decision.next = .shutDown(tasksToCancel: tasks, deliveries: deliveries)
        case .sweepStep:
            let (retired, finished) = _backgroundSweepStep(in: &state)
            (decision.work.retired, decision.next) = (retired, .sweepStep(finished: finished))
        }
        if !state.preloadsToCancel.isEmpty {
            decision.work.cancel(preloads: state.preloadsToCancel)
            state.preloadsToCancel.removeAll()
        }
        return decision
    }
}

// MARK: - Attaching users

extension LoadCore {
    /// Step 4, under the lock: attaches the user to the key's handler and decides by the handler's
    /// phase. Sets `fileLookup` when the file cache is read next; `knownFileMiss` (step 3) skips
    /// that lookup and starts the load at once.
    func _attachAndDecide(
        _ call: ManageCall, key: ObjectKey, policy: LoadPolicy, decoder: AnyObjectDecoder, stale staleHit: CachedObject?,
        link makeLink: @Sendable () -> any UserLink, knownFileMiss: Bool, fileLookup: inout FileLookup?,
        in state: inout ManagerState
    ) -> PendingWork {
        state.statistics.requests += 1
        var work = PendingWork()
        let (record, handler) = _attach(
            call, link: makeLink, key: key, policy: policy, decoder: decoder,
            work: &work, in: &state)
        let answer = Answer(record: record, key: key)
        if let stale = staleHit ?? handler.staleReadyObject(policy: policy.freshness), !handler.phase.isBusy,
            _revalidate(stale, handler: handler, answer: answer, policy: policy, work: &work, in: &state)
        {
            return work
        }
        switch handler.phase {
        case .ready(let entry, _):
            state.statistics.sharedObjectHits += 1
            _shareReadyObject(entry, handler: handler, answer: answer, policy: policy, work: &work)
        case .loading, .loaded:
            _join(handler, record: record, policy: policy, work: &work, in: &state)
        case .new, .failed:
            fileLookup = _startOrAnswerFromFailureMemory(
                handler, call: call, answer: answer, policy: policy, knownFileMiss: knownFileMiss,
                work: &work, in: &state)
        }
        return work
    }

    /// Who a decision under the lock answers: the user's record, as just attached for its request.
    struct Answer {
        let record: Attachment
        let key: ObjectKey

        /// The request the user is managed with now.
        var request: ObjectRequest { record.request }

        func delivery(_ event: UserEvent) -> PendingDelivery {
            PendingDelivery(to: record, key: key, event: event)
        }
    }

    /// A stale object: delivered now and revalidated in the background (stale-while-revalidate),
    /// or revalidated in the foreground while the user waits. `false` when a background
    /// revalidation already runs and the phase decides instead.
    private func _revalidate(
        _ stale: CachedObject, handler: ObjectHandler, answer: Answer, policy: LoadPolicy, work: inout PendingWork,
        in state: inout ManagerState
    ) -> Bool {
        if policy.staleWhileRevalidate, stale.freshness?.mustRevalidate != true {
            state.statistics.memoryHits += 1
            work.deliveries.append(answer.delivery(.ready(stale.object, .memory, .stale(revalidationError: nil))))
            work.append(_startRevalidation(answer.key, stale: stale, in: &state))
            return true
        }
        guard handler.revalidatingFetch == nil else { return false }
        handler.prepareRestart(stale: stale, request: answer.request, policy: policy)
        state.handlers[answer.key] = handler
        work.append(_startLoading(answer.key, evictable: policy.participatesInLoadingBuffer, in: &state))
        return true
    }

    /// The handler holds the object for other users: this user shares it (and it goes back into
    /// the memory cache, which may have evicted it).
    private func _shareReadyObject(
        _ entry: CachedObject, handler: ObjectHandler, answer: Answer, policy: LoadPolicy, work: inout PendingWork
    ) {
        if policy.cacheInMemory {
            work.released += memoryCache.setValue(entry, forKey: answer.key, cost: entry.cost).map(\.object)
        }
        work.deliveries.append(answer.delivery(.ready(entry.object, .sharedObject)))
    }

    /// A load is under way: the user joins it (one download, one decode).
    private func _join(
        _ handler: ObjectHandler, record: Attachment, policy: LoadPolicy, work: inout PendingWork, in state: inout ManagerState
    ) {
        state.statistics.coalescedJoins += 1
        guard case .loading(let fetchID) = handler.phase else { return }
        if let fetch = state.fetches[handler.key.dataKey], fetch.identifier == fetchID {
            _listen(CollectionOfOne(record), of: handler, to: fetch)
        }
        guard policy.participatesInLoadingBuffer else { return }
        _promoteFetchFromPrefetchLane(dataKey: handler.key.dataKey, fetch: fetchID, work: &work, in: &state)
        // Joining makes the load the newest in the buffer, even if it was already there: a row
        // that just scrolled in wants it now, and a load started long ago for a row that left (a
        // shared avatar) must not be the next pushed out.
        work.append(_pushToLoadingBuffer(handler.key, in: &state))
    }

    /// Nothing under way: a remembered failure answers the user at once; otherwise the handler
    /// starts, from the file cache (returned: read after the lock) or from the network (at once
    /// when `knownFileMiss`).
    private func _startOrAnswerFromFailureMemory(
        _ handler: ObjectHandler, call: ManageCall, answer: Answer, policy: LoadPolicy, knownFileMiss: Bool,
        work: inout PendingWork, in state: inout ManagerState
    ) -> FileLookup? {
        if policy.failureMemoryInterval > 0, let failure = state.failures.failure(for: answer.key, now: state.now) {
            state.statistics.failures[.recentlyFailed, default: 0] += 1
            work.deliveries.append(answer.delivery(.failed(.recentlyFailed(failure))))
            // That answers its request: it hears nothing of a later load of this key.
            handler.detach(answer.record)
            return nil
        }
        handler.adopt(request: answer.request, policy: policy)
        state.handlers[answer.key] = handler
        let inline = inlineFileRead(isAwaiting: call.isAwaiting, request: answer.request, policy: policy)
        guard policy.cacheInFile, hasFileCache, inline != nil || handler.decoder.storesVariant, !knownFileMiss else {
            work.append(_startLoading(answer.key, evictable: policy.participatesInLoadingBuffer, in: &state))
            return nil
        }
        // Look in the file cache first (on this thread, or in the background for a variant lookup
        // under the asynchronous policy); a miss starts the load.
        let generation = handler.startFileLookup()
        let writeGate = handler.decoder.storesVariant ? handler.openWriteGate() : nil
        state.handlers[answer.key] = handler
        _cancelPreloads(in: &state)
        return FileLookup(
            generation: generation, policy: policy, inline: inline, decoder: handler.decoder, request: handler.request,
            writeGate: writeGate)
    }

    /// How a file-cache hit of this request may be read inside `manage`, on the caller's thread:
    /// up to `Configuration.synchronousFileReadLimit` bytes under the `.synchronous` policy; up to `Configuration.inMemoryThreshold` bytes for
    /// an awaiting caller (`object(for:)`, `loadEvents`) whose request leaves the policy to the
    /// manager; `nil`: in the background.
    ///
    /// Why awaiting callers: they run on the cooperative pool, never on the main thread, and
    /// reading a few kilobytes from the page cache costs less than the two thread hops of the
    /// background lookup (there and back), which made an awaited hit about three times slower.
    /// Larger entries are a miss here and are read by the fetch task, so a long read never holds a
    /// cooperative thread.
    func inlineFileRead(isAwaiting: Bool, request: ObjectRequest, policy: LoadPolicy) -> InlineFileRead? {
        if policy.fileCacheDelivery == .synchronous {
            return InlineFileRead(maximumBytes: configuration.synchronousFileReadLimit)
        }
        guard request.policy.fileCacheDelivery == nil, isAwaiting else { return nil }
        return InlineFileRead(maximumBytes: configuration.inMemoryThreshold)
    }

    /// Starts revalidating the ready object of `key` in the background, unless that is under way.
    func _startRevalidation(_ key: ObjectKey, stale: CachedObject, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key], handler.revalidatingFetch == nil, !handler.phase.isBusy else {
            return PendingWork()
        }
        let fetchID: UInt64
        if let fetch = state.fetches[key.dataKey] {
            fetch.subscribe(key, decoder: handler.decoder)
            fetchID = fetch.identifier
        } else {
            fetchID = _createFetch(
                dataKey: key.dataKey, request: handler.request, policy: handler.policy, subscriber: key,
                // Users already have the stale object: the revalidation is background work.
                inPrefetchLane: false, priority: .low, validators: stale.freshness, in: &state)
        }
        handler.startBackgroundRevalidation(stale: stale, fetch: fetchID)
        state.handlers[key] = handler
        return PendingWork()
    }

    /// Attaches the user of `call` to the handler of `key` (creating it), detaching it from any
    /// other key. Returns the user's record (with its new attachment identifier and its link) and
    /// the handler.
    @discardableResult
    func _attach(
        _ call: ManageCall, link makeLink: @Sendable () -> any UserLink, key: ObjectKey, policy: LoadPolicy,
        decoder: @autoclosure () -> AnyObjectDecoder, work: inout PendingWork, in state: inout ManagerState
    ) -> (record: Attachment, handler: ObjectHandler) {
        let request = call.request
        // The user's record from its last `manage`, reused. A record whose user is gone belonged
        // to a deallocated object that had the same address: replaced, it stays in its handler's
        // list until the next sweep, which it brings closer (taking it out now would scan that
        // list on every such `manage`).
        var record = state.attachments[UserKey(call.userID)]
        if let existing = record {
            if !existing.isAlive {
                state.sweep.replacedRecords += 1
                existing.retire()
                record = nil
            } else {
                if existing.link.delivery != call.delivery || existing.link.wantsPreviews != call.wantsPreviews {
                    existing.link = makeLink()
                }
                if existing.isListed {
                    if existing.key == key, let handler = state.handlers[key] {
                        // The same key again (a new signed URL for the oid, another header or
                        // policy): the user stays on this handler and joins what it is doing, but
                        // its answer carries the request it is managed with now, under a new
                        // identifier, so a callback decided for the previous request is dropped
                        // and not mistaken for it.
                        existing.request = request
                        if existing.attach(state._makeIdentifier()) { work.deliveryInFlight = existing.currency }
                        existing.evictable = policy.participatesInLoadingBuffer
                        return (existing, handler)
                    }
                    _detach(existing, work: &work, in: &state)
                }
                // Not listed: its last request ended in a failure or a cancellation, which detached it.
            }
        }
        // Before the handler lookup: a sweep may drop handlers. Only when the background sweep is
        // behind; otherwise it is scheduled, and runs beside `manage` (see `TableSweep`).
        let swept = _sweepIfBehind(in: &state)
        if !swept.isEmpty { work.retired += swept }  // appending an empty array cost 2 % of a hit
        if _scheduleSweepIfDue(in: &state) { work.sweepsTables = true }
        let handler: ObjectHandler
        if let existing = state.handlers[key] {
            handler = existing
        } else {
            handler = ObjectHandler(key: key, decoder: decoder(), request: request, policy: policy)
            state.handlers[key] = handler
        }
        let attachment = state._makeIdentifier()
        let evictable = policy.participatesInLoadingBuffer
        if let record {
            record.key = key
            record.request = request
            if record.attach(attachment) { work.deliveryInFlight = record.currency }
            record.evictable = evictable
            handler.attach(record)
            return (record, handler)
        }
        let created = Attachment(link: makeLink(), key: key, request: request, attachment: attachment, evictable: evictable)
        state._insertAttachment(created)
        handler.attach(created)
        return (created, handler)
    }

    /// A `manage` whose object is fresh in memory, at `now`: counted, and the user attached to the
    /// key's handler (`_attachForHit`). Called directly by the façade rather than through
    /// `decide` (see `LoadCore`). `deferred`: a section left by a caller past its lock budget.
    func _memoryHit(
        _ call: ManageCall, link makeLink: @Sendable () -> any UserLink, key: ObjectKey, policy: LoadPolicy,
        cached: CachedObject, decoder: @autoclosure () -> AnyObjectDecoder, deferred: Bool, at now: MonotonicInstant,
        work: inout PendingWork, in state: inout ManagerState
    ) -> Attachment {
        state.now = now
        state.statistics.requests += 1
        state.statistics.memoryHits += 1
        if deferred { state.statistics.deferredCalls += 1 }
        return _attachForHit(call, link: makeLink, key: key, policy: policy, cached: cached, decoder: decoder(), work: &work, in: &state)
    }

    /// The memory-hit path: attaches the user to a handler holding the object. Adds to `work`
    /// what detaching it from a previous key caused (usually nothing), and returns the user's
    /// record, for a caller that cannot deliver the hit on its own thread.
    ///
    /// The work is written in place rather than returned beside the record: a tuple of both,
    /// passed out of the manager's lock, was copied and destroyed through the runtime's value
    /// witnesses (8 % of a hit's instructions in `manage-hit`).
    func _attachForHit(
        _ call: ManageCall, link makeLink: @Sendable () -> any UserLink, key: ObjectKey, policy: LoadPolicy,
        cached: CachedObject, decoder: @autoclosure () -> AnyObjectDecoder, work: inout PendingWork, in state: inout ManagerState
    ) -> Attachment {
        let (record, handler) = _attach(
            call, link: makeLink, key: key, policy: policy, decoder: decoder(), work: &work, in: &state)
        if handler.phase.isBusy {
            // The memory lookup ran before the lock: since then the object was evicted and another
            // user started loading the key again. The hit answers this user's request; listed on
            // the load, it would also hear that load's failure or cancellation (a second final
            // callback), and would keep a load it does not need in the loading buffer.
            handler.detach(record)
        } else {
            handler.becomeReady(fromMemory: cached)
        }
        return record
    }

    /// Detaches the user `userID` from whatever it was managed for (and forgets its record),
    /// cancelling that load if nobody else wants it.
    func _detach(userID: ObjectIdentifier, in state: inout ManagerState) -> PendingWork {
        guard let record = state._removeAttachment(of: userID) else { return PendingWork() }
        var work = PendingWork()
        _detach(record, work: &work, in: &state)
        // Retired just now: a callback that passed its check before runs on another thread.
        if record.currency.isDeliveringElsewhere { work.deliveryInFlight = record.currency }
        return work
    }

    /// Takes `record` off its handler's list, dropping the handler if nothing needs it any more,
    /// or cancelling its load if nobody else wants it; what is left to do after the lock goes
    /// into `work` (written in place: a re-managed cell detaches on every `manage`, and a
    /// returned `PendingWork` merged into the caller's cost that call 5 % of its instructions).
    func _detach(_ record: Attachment, work: inout PendingWork, in state: inout ManagerState) {
        let key = record.key
        defer { record.isListed = false }
        guard let handler = state.handlers[key] else { return }
        handler.detach(record, withReleased: true)
        if handler.users.isEmpty, !handler.phase.isBusy, !handler.heldByPrefetch, handler.revalidatingFetch == nil {
            // Nobody uses it and nothing is under way. Kept idle when the memory cache holds its
            // object: a cell scrolled back to the key finds it, where dropping it here and making
            // a new one on that hit was a third of a hit's instructions (`manage-hit`).
            if _idleIfTheMemoryCacheHoldsItsObject(handler) { return }
            // Otherwise drop it. Only users keep a handler's object
            // alive; the memory cache keeps its own reference within its limits. The handler, and
            // with it the object when the memory cache does not hold the key, is freed after the
            // lock, off a `manage` caller's thread (`CallerHandOff`): freeing it here was a tenth
            // of detaching a re-managed cell (a profile of the `manage-latency` benchmark).
            if let dropped = state.handlers.removeValue(forKey: key) {
                if !memoryCache.contains(key) { dropped.releaseHeldObjects(into: &work.released) }
                work.retired.append(dropped)
            }
            return
        }
        // Its last user left while it loads: what is still wanted goes first (`_refreshPriority`).
        if case .loading = handler.phase, !handler.hasLiveUsers { _refreshPriority(dataKey: key.dataKey, in: &state) }
        work.append(_cancelIfAbandoned(key, in: &state))
    }

    /// Makes `handler` (nobody uses it, nothing is under way) idle, holding nothing, when the
    /// memory cache's entry of its key is the very value its ready object came from or went
    /// into (`ObjectHandler.readyEntry`); `false` otherwise, and it is dropped: releasing the
    /// handler's reference to an object the memory cache no longer holds could free it under the
    /// lock.
    ///
    /// Why only then: an idle handler must keep no object alive beyond the memory cache's limits,
    /// and dropping its reference frees nothing while the memory cache holds that very value.
    /// The sweep takes idle handlers out once the memory cache no longer holds their key (see
    /// `TableSweep`), so the table stays bounded by the users alive and the memory cache's entries.
    func _idleIfTheMemoryCacheHoldsItsObject(_ handler: ObjectHandler) -> Bool {
        guard let entry = handler.readyEntry, handler.revalidatingFetch == nil, handler.staleObject == nil,
            memoryCache.holds(entry, forKey: handler.key)
        else { return false }
        handler.becomeIdle()
        return true
    }

    /// Cancels the load of `key` if it has no live users, no prefetch wants it, its policy does
    /// not finish such loads, and its bytes are not being decoded already.
    func _cancelIfAbandoned(_ key: ObjectKey, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key], case .loading = handler.phase,
            !handler.policy.finishLoadingWithoutUsers, !handler.heldByPrefetch, !handler.hasLiveUsers,
            !_bytesAreDecoding(for: handler, in: state)
        else { return PendingWork() }
        return _cancelHandler(key, reason: .noUsers, in: &state)
    }

    /// A `manage` whose request nothing can load (`reason`: an empty key, a URL the loader cannot
    /// load): the user is detached and told `.invalidRequest`, unless the key's handler holds or
    /// is getting its object (a user with the same oid loads it, or the app is storing it:
    /// `ObjectRequest(oid:)`); then `nil`, and the call is answered like any other.
    func _answerUnloadable(
        _ call: ManageCall, key: ObjectKey, reason: String, link makeLink: @Sendable () -> any UserLink,
        in state: inout ManagerState
    ) -> PendingWork? {
        if !key.dataKey.isEmpty, let handler = state.handlers[key] {
            switch handler.phase {
            case .ready, .loading, .loaded: return nil
            case .new, .failed: break
            }
        }
        state.statistics.requests += 1
        var work = _detach(userID: call.userID, in: &state)
        state.statistics.failures[.invalidRequest, default: 0] += 1
        work.deliveries.append(
            PendingDelivery(
                unconditionallyTo: makeLink(), request: call.request, key: key, event: .failed(.invalidRequest(reason: reason))))
        return work
    }
}

/// A file-cache read decided under the lock, done after it, with what it needs of the
/// handler (read under that lock, so the read takes the lock again only on a miss, to start
/// the load, or to deliver a hit).
struct FileLookup {
    let generation: UInt64
    let policy: LoadPolicy
    let inline: InlineFileRead?
    let decoder: AnyObjectDecoder
    let request: ObjectRequest
    /// Guards the variant a hit of the original stores (`nil` for decoders that store none).
    let writeGate: WriteGate?
}

// MARK: - Loading

extension LoadCore {
    /// Moves the handler of `key` to loading: joins the fetch of its data key or starts one, and
    /// takes a loading-buffer slot when `evictable`.
    func _startLoading(_ key: ObjectKey, evictable: Bool, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key] else { return PendingWork() }
        var work = PendingWork()
        if let fetch = state.fetches[key.dataKey] {
            fetch.subscribe(key, decoder: handler.decoder)
            state.statistics.coalescedJoins += 1
            handler.startLoading(fetch: fetch.identifier)
            _listen(handler.users, of: handler, to: fetch)
            // After the handler is loading: promoting the fetch frees a prefetch slot, and a
            // prefetch of this very key started from it must find the handler busy, not new.
            if evictable {
                _promoteFetchFromPrefetchLane(dataKey: key.dataKey, fetch: fetch.identifier, work: &work, in: &state)
            }
        } else {
            // Paced (`LoadRateLimit`) when the loading buffer can push it out: the loads of a fast
            // scroll. An `async` caller's load and a prefetch go at once; nothing cancels them
            // a moment later, so waiting would only delay them.
            let fetchID = _createFetch(
                dataKey: key.dataKey, request: handler.request, policy: handler.policy,
                subscriber: key, inPrefetchLane: false, priority: handler.effectivePriority,
                validators: handler.staleObject?.freshness, paced: evictable, in: &state)
            handler.startLoading(fetch: fetchID)
            if let fetch = state.fetches[key.dataKey] { _listen(handler.users, of: handler, to: fetch) }
        }
        if evictable {
            work.append(_pushToLoadingBuffer(key, in: &state))
        } else {
            _refreshPriority(dataKey: key.dataKey, in: &state)
        }
        return work
    }

    /// `users` of `handler`, which loads from `fetch`, hear its progress and previews from its
    /// task (`FetchAudience`). One released already is listed too: the first report finds it
    /// gone, and asks whether the load is abandoned.
    func _listen(_ users: some Sequence<Attachment>, of handler: ObjectHandler, to fetch: FetchRecord) {
        for record in users {
            fetch.audience.listen(
                to: record, key: handler.key, fetch: fetch.identifier,
                cancelsWhenAbandoned: !handler.policy.finishLoadingWithoutUsers)
        }
    }

    /// Recomputes the priority of the fetch of `dataKey` from everything that wants it (its
    /// handlers' live users and prefetches) and hands it to the loader when it changed. A fetch
    /// nothing wants any more (its users left: the cells of rows scrolled past show other rows
    /// now) goes on at `.veryLow`, so that what is wanted goes first where loads wait: for a
    /// token of the rate limit, for a connection to the host.
    func _refreshPriority(dataKey: String, in state: inout ManagerState) {
        guard let fetch = state.fetches[dataKey] else { return }
        var highest: LoadPriority? = fetch.prefetchHolds > 0 ? fetch.prefetchPriority : nil
        for key in fetch.subscribers {
            guard let priority = state.handlers[key]?.wantedPriority else { continue }
            if highest.map({ priority > $0 }) ?? true { highest = priority }
        }
        fetch.priority.set(highest ?? .veryLow)
    }

    /// Starts the one fetch of `dataKey`. Returns its identifier. `paced`: its downloads wait
    /// for the load rate limit's tokens (a load the loading buffer can push out).
    func _createFetch(
        dataKey: String, request: ObjectRequest, policy: LoadPolicy, subscriber: ObjectKey?,
        inPrefetchLane: Bool, priority: LoadPriority, validators: HTTPFreshness? = nil, paced: Bool = false,
        in state: inout ManagerState
    ) -> UInt64 {
        let identifier = state._makeIdentifier()
        if !inPrefetchLane { _cancelPreloads(in: &state) }
        let priorityCell = LoadPriorityCell(priority)
        let fetch = FetchRecord(
            identifier: identifier, dataKey: dataKey, request: request, policy: policy,
            inPrefetchLane: inPrefetchLane, task: FetchTaskSlot(), priority: priorityCell,
            previews: PreviewFeed(interval: configuration.previewInterval))
        if let subscriber {
            fetch.subscribe(subscriber, decoder: state.handlers[subscriber]?.decoder)
        } else {
            fetch.prefetchHolds = 1
            fetch.prefetchPriority = priority
        }
        if inPrefetchLane {
            state.runningPrefetches += 1
            state.statistics.prefetchesStarted += 1
        }
        // The task is created once the lock is released (`ManagerLock`: creating a task may wake a
        // thread), and runs the download and the decodes the manager's fetch runner makes of it.
        let plan = FetchPlan(
            dataKey: dataKey, request: request, policy: policy, validators: validators, priority: priorityCell,
            fetch: identifier, writeGate: fetch.writeGate, previews: fetch.previews, audience: fetch.audience, paced: paced,
            forUsers: subscriber != nil)
        state.fetchStarts.append(
            FetchStart(slot: fetch.task, running: fetchRunner.running) { [fetchRunner] in await fetchRunner.run(plan) })
        state.fetches[dataKey] = fetch
        return identifier
    }

    /// A fetch running in the prefetch lane that a user now waits for leaves the lane (freeing a
    /// prefetch slot) and becomes an ordinary load.
    func _promoteFetchFromPrefetchLane(dataKey: String, fetch identifier: UInt64, work: inout PendingWork, in state: inout ManagerState) {
        guard let fetch = state.fetches[dataKey], fetch.identifier == identifier, fetch.inPrefetchLane else { return }
        fetch.inPrefetchLane = false
        state.runningPrefetches -= 1
        work.append(_startQueuedPrefetches(in: &state))
    }

    /// Puts `key` in the loading buffer as its newest load and cancels what that pushes out.
    func _pushToLoadingBuffer(_ key: ObjectKey, in state: inout ManagerState) -> PendingWork {
        var work = PendingWork()
        // Loads whose users have all gone, under a policy that cancels those, leave first. Only
        // those loads are looked up: under the default policy (finish them) this is no work.
        for waiting in state.loadingBuffer.keysCancelledWhenAbandoned(excluding: key) {
            work.append(_cancelIfAbandoned(waiting, in: &state))
        }
        let handler = state.handlers[key]
        let progress = state._progressForPushOut()
        let pushedOut = state.loadingBuffer.push(
            key, priority: handler?.effectivePriority ?? .normal,
            cancelsWhenAbandoned: handler.map { !$0.policy.finishLoadingWithoutUsers } ?? false, progress: progress)
        work.append(_handleBufferOverflow(pushedOut, in: &state))
        _refreshPriority(dataKey: key.dataKey, in: &state)
        return work
    }

    /// Cancels the loads pushed out of the loading buffer, unless a user that is not subject to the
    /// buffer (an `async` caller) or a prefetch still wants them: those just leave the buffer.
    func _handleBufferOverflow(_ pushedOut: [ObjectKey], in state: inout ManagerState) -> PendingWork {
        var work = PendingWork()
        for key in pushedOut {
            guard let handler = state.handlers[key], case .loading = handler.phase else { continue }
            if handler.hasLiveUnevictableUsers || handler.heldByPrefetch || _bytesAreDecoding(for: handler, in: state) { continue }
            work.append(_cancelHandler(key, reason: .loadingBufferOverflow, in: &state))
        }
        return work
    }

    /// Whether `handler` loads from a fetch whose bytes are here and being decoded on its task
    /// (`FetchAudience.isDecoding`): cancelling it would throw those bytes away a moment before
    /// the section that delivers them; it leaves the loading buffer instead, as at a fetch's end.
    func _bytesAreDecoding(for handler: ObjectHandler, in state: ManagerState) -> Bool {
        guard case .loading(let identifier) = handler.phase, let fetch = state.fetches[handler.key.dataKey],
            fetch.identifier == identifier
        else { return false }
        return fetch.audience.isDecoding
    }

    /// Stops the handler of `key`: back to `.new`, out of the buffer and its fetch (which is
    /// cancelled when nobody else wants it); its live users are told why.
    func _cancelHandler(_ key: ObjectKey, reason: ManagedCacheError.CancellationReason, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key], handler.phase.isBusy else { return PendingWork() }
        var work = PendingWork()
        state.prefetchWatch.settleHandler(key, .cancelled)
        handler.cancel()
        handler.compactUsers()
        state.loadingBuffer.remove(key)
        state.statistics.loadsCancelled += 1
        if reason == .loadingBufferOverflow { state.statistics.loadsCancelledByBuffer += 1 }
        if let fetch = state.fetches[key.dataKey] {
            fetch.unsubscribe(key)
            if fetch.isWanted {
                _refreshPriority(dataKey: key.dataKey, in: &state)
            } else {
                work.cancel(fetch.task)
                state.fetches.removeValue(forKey: key.dataKey)
                work.retired.append(fetch)  // freed after the lock, and off a `manage` caller's thread
                if fetch.inPrefetchLane {
                    state.runningPrefetches -= 1
                    work.append(_startQueuedPrefetches(in: &state))
                }
            }
        }
        work.deliveries += handler.deliveries(of: .failed(.cancelled(reason)))
        // Their requests are over: a restart of this key by anyone else is not theirs to hear.
        handler.endUsersRequests()
        return work
    }

    /// A progress report of a fetch found a user released (deallocated, not unmanaged) whose
    /// load may be cancelled without users (`FetchAudience.progressed`): each of its loads that
    /// nobody waits for any more is cancelled. The report itself went to the users without the
    /// lock.
    func _fetchUsersReleased(dataKey: String, fetch identifier: UInt64, in state: inout ManagerState) -> PendingWork {
        guard let fetch = state.fetches[dataKey], fetch.identifier == identifier else { return PendingWork() }
        var work = PendingWork()
        for key in fetch.subscribers {
            work.append(_cancelIfAbandoned(key, in: &state))
        }
        return work
    }

    /// The loading buffer takes `capacity`: the loads that no longer fit are cancelled (unless
    /// something outside the buffer still wants them).
    func _resizeLoadingBuffer(to capacity: Int, in state: inout ManagerState) -> PendingWork {
        let progress = state._progressForPushOut()
        let pushedOut = state.loadingBuffer.resize(to: capacity, progress: progress)
        return _handleBufferOverflow(pushedOut, in: &state)
    }

    /// A file-cache lookup (generation `generation`) found nothing usable: the handler, if it
    /// still waits for that lookup, loads from the network.
    func _fileLookupMissed(_ key: ObjectKey, generation: UInt64, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key], handler.generation == generation, case .loaded = handler.phase
        else { return PendingWork() }
        return _startLoading(key, evictable: handler.policy.participatesInLoadingBuffer, in: &state)
    }
}

// MARK: - Finishing fetches and decodes

extension LoadCore {
    /// A fetch ended: it leaves the table (a stale result of a replaced fetch changes nothing),
    /// its prefetch slot goes to the next waiting prefetch, and every handler waiting for it
    /// gets its object (decoded on the fetch's task before this section: `decoded`, by key),
    /// decodes the bytes (returned: decoded on the fetch's task after it), revalidates, restarts
    /// or fails. `now`: for stale-if-error.
    func _fetchFinished(
        dataKey: String, fetch identifier: UInt64, result: Result<FetchedData, ManagedCacheError>,
        decoded: [ObjectKey: Result<any Sendable, ManagedCacheError>], now: Date, in state: inout ManagerState
    ) -> (PendingWork, FetchEnd) {
        guard let fetch = _endFetch(dataKey: dataKey, identifier: identifier, in: &state) else { return (PendingWork(), FetchEnd()) }
        var work = PendingWork()
        state.prefetchWatch.settleFetch(identifier, PrefetchOutcome(fetchResult: result))
        if fetch.inPrefetchLane { work.append(_startQueuedPrefetches(in: &state)) }
        switch result {
        case .success(let fetched):
            let end = _bytesArrived(fetched, decoded: decoded, for: fetch, work: &work, in: &state)
            return (work, end)
        case .failure(let error):
            _fetchFailed(error, for: fetch, now: now, work: &work, in: &state)
            return (work, FetchEnd())
        }
    }

    /// What a fetch's task does after the section that ended it.
    struct FetchEnd {
        /// The decodes still to run, each delivered in a section of its own: bytes of a handler
        /// the task did not decode for before the section.
        var decodes: [DecodeJob] = []
        /// Objects delivered in the section whose decoder stores a variant: the variant to write,
        /// under the handler's policy.
        var variants: [(job: DecodeJob, object: any Sendable, policy: LoadPolicy)] = []
    }

    /// Removes the fetch `identifier` of `dataKey` (freeing its prefetch slot); `nil` when it is
    /// not the current one.
    private func _endFetch(dataKey: String, identifier: UInt64, in state: inout ManagerState) -> FetchRecord? {
        guard let fetch = state.fetches[dataKey], fetch.identifier == identifier else { return nil }
        state.fetches.removeValue(forKey: dataKey)
        if fetch.inPrefetchLane { state.runningPrefetches -= 1 }
        return fetch
    }

    /// The bytes are here: each waiting handler revalidates its stale object (a `304`), restarts
    /// without validators (a `304` for bytes it never had), completes the decode its fetch's task
    /// ran for it (`decoded`), or gets a decode job. Bytes nobody decodes and no file holds are
    /// kept in memory (HJCache's "loaded" state).
    private func _bytesArrived(
        _ fetched: FetchedData, decoded: [ObjectKey: Result<any Sendable, ManagedCacheError>], for fetch: FetchRecord,
        work: inout PendingWork, in state: inout ManagerState
    ) -> FetchEnd {
        state.statistics.count(fetched.origin)
        var end = FetchEnd()
        var completed = 0
        for key in fetch.subscribers {
            guard let handler = state.handlers[key], handler.isWaiting(for: fetch.identifier) else { continue }
            if fetched.notModified, let stale = handler.staleObject {
                work.append(_revalidated(key, object: stale.object, freshness: fetched.freshness, in: &state))
                continue
            }
            if let failure = fetched.staleAfterFailure, let stale = handler.staleObject {
                // The stale file entry the fetch fell back to holds the bytes of the stale object
                // this handler already has: that object is delivered, not decoded a second time.
                work.append(
                    _revalidated(
                        key, object: stale.object, freshness: stale.freshness, origin: .memory,
                        objectFreshness: .stale(revalidationError: failure), in: &state))
                continue
            }
            guard fetched.hasBytes else {
                // A 304 for bytes this decoder never had: load them unconditionally.
                handler.dropStaleObjectForFullLoad()
                state.handlers[key] = handler
                work.append(_startLoading(key, evictable: false, in: &state))
                continue
            }
            handler.bytesArrived()
            state.handlers[key] = handler
            state.loadingBuffer.remove(key)
            let job = DecodeJob(
                key: key, generation: handler.generation, decoder: handler.decoder,
                data: fetched.loadedData(prefersFileURL: handler.decoder.prefersFileURL), origin: fetched.origin,
                freshness: fetched.freshness, writeGate: handler.decoder.storesVariant ? handler.openWriteGate() : nil,
                staleAfterFailure: fetched.staleAfterFailure, revalidatesAfterDelivery: fetched.servedWhileRevalidating)
            guard let outcome = decoded[key] else {
                end.decodes.append(job)
                continue
            }
            completed += 1
            work.append(_completeDecode(job, outcome: outcome, countingFileCacheHit: false, in: &state))
            if case .success(let object) = outcome, job.decoder.storesVariant {
                end.variants.append((job, object, handler.policy))
            }
        }
        if end.decodes.isEmpty, completed == 0, fetched.entry == nil, let data = fetched.memory {
            work.released += undecodedData.setValue(data, forKey: fetch.dataKey, cost: data.count)
        }
        return end
    }

    /// The fetch failed (a cancellation changes nothing): the failure is remembered, and each
    /// waiting handler serves its stale object when `StaleIfError` allows it (the same decision
    /// as for a stale file entry, at `now`), ends its background revalidation, or fails.
    private func _fetchFailed(
        _ error: ManagedCacheError, for fetch: FetchRecord, now: Date, work: inout PendingWork, in state: inout ManagerState
    ) {
        if case .cancelled = error { return }
        state.statistics.failures[error.kind, default: 0] += 1
        state.failures.record(error, forDataKey: fetch.dataKey, policy: fetch.policy, now: state.now)
        for key in fetch.subscribers {
            guard let handler = state.handlers[key], handler.isWaiting(for: fetch.identifier) else { continue }
            if let stale = handler.staleObject, let freshness = stale.freshness,
                StaleIfError.decide(freshness: freshness, failure: error, now: now, policy: handler.policy) == .deliverStale
            {
                // Stale-if-error: the network failed, the object we had is still better than nothing
                // (users of a background revalidation have it already and hear nothing more).
                work.append(
                    _revalidated(
                        key, object: stale.object, freshness: stale.freshness, origin: .memory,
                        objectFreshness: .stale(revalidationError: error), in: &state))
            } else if handler.revalidatingFetch == fetch.identifier {
                // Its users have the stale object already (stale-while-revalidate): it stays.
                handler.endBackgroundRevalidation()
                state.handlers[key] = handler
            } else {
                work.append(_fail(key, error: error, generation: nil, in: &state))
            }
        }
    }

    /// `completeDecode`'s section, under the lock.
    func _completeDecode(
        _ job: DecodeJob, outcome: Result<any Sendable, ManagedCacheError>, countingFileCacheHit: Bool,
        in state: inout ManagerState
    ) -> PendingWork {
        // A file-cache hit is counted in this section rather than a lock of its own: one lock
        // fewer on the path that reads a hit inside `manage`.
        if countingFileCacheHit { state.statistics.fileCacheHits += 1 }
        guard let handler = state.handlers[job.key], handler.generation == job.generation,
            case .loaded = handler.phase
        else { return PendingWork() }
        switch outcome {
        case .success(let object):
            var work = PendingWork()
            state.statistics.decodes += 1
            state.failures.succeeded(job.key)
            // With no user left, only the memory cache keeps the object (within its limits).
            let cached = CachedObject(
                object: object, freshness: job.freshness, cost: handler.decoder.cost(of: object, byteCount: job.data.byteCount))
            handler.finishDecoding(cached, origin: job.origin)
            if handler.policy.cacheInMemory {
                work.released += memoryCache.setValue(cached, forKey: job.key, cost: cached.cost).map(\.object)
            }
            work.deliveries += handler.deliveries(of: .ready(object, job.origin, job.objectFreshness))
            state.prefetchWatch.settleHandler(job.key, .loaded(job.origin))
            if job.revalidatesAfterDelivery, case .ready = handler.phase {
                // A stale entry served at once (stale-while-revalidate on a cold start): now the
                // revalidation its users may get a newer object from.
                work.append(
                    _startRevalidation(
                        job.key, stale: CachedObject(object: object, freshness: job.freshness, cost: handler.objectCost), in: &state))
            }
            return work
        case .failure(let error):
            state.statistics.failures[error.kind, default: 0] += 1
            state.failures.record(error, for: job.key, policy: handler.policy, now: state.now)
            return _fail(job.key, error: error, generation: job.generation, in: &state)
        }
    }

    /// A stale object is ready again: confirmed by a `304` (origin `.revalidated`, current), or
    /// shown because revalidating it failed (stale-if-error: origin `.memory`, `objectFreshness`
    /// stale). Back to ready with `freshness`, into the memory cache, and to the users waiting for it.
    func _revalidated(
        _ key: ObjectKey, object: any Sendable, freshness: HTTPFreshness?, origin: DataOrigin = .revalidated,
        objectFreshness: ObjectFreshness = .current, in state: inout ManagerState
    ) -> PendingWork {
        guard let handler = state.handlers[key] else { return PendingWork() }
        var work = PendingWork()
        let wasWaiting = handler.revalidatingFetch == nil  // a background revalidation's users already have it
        state.prefetchWatch.settleHandler(key, .loaded(origin))
        let cached = CachedObject(object: object, freshness: freshness, cost: handler.objectCost)
        handler.revalidated(cached, origin: origin)
        state.handlers[key] = handler
        state.loadingBuffer.remove(key)
        if handler.policy.cacheInMemory {
            work.released += memoryCache.setValue(cached, forKey: key, cost: cached.cost).map(\.object)
        }
        guard wasWaiting else { return work }
        work.deliveries += handler.deliveries(of: .ready(object, origin, objectFreshness))
        return work
    }

    /// Moves the handler of `key` to failed, purges the key from every cache and tells its users.
    func _fail(_ key: ObjectKey, error: ManagedCacheError, generation: UInt64?, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key] else { return PendingWork() }
        if let generation, handler.generation != generation { return PendingWork() }
        var work = PendingWork()
        state.prefetchWatch.settleHandler(key, .failed(error))
        handler.fail(error)
        state.handlers[key] = handler
        state.loadingBuffer.remove(key)
        if let removed = memoryCache.removeValue(forKey: key) { work.released.append(removed.object) }
        undecodedData.removeValue(forKey: key.dataKey)
        if case .decodingFailed = error { work.fileCachePurges.append(key.dataKey) }
        work.events.append(.loadFailed(key: key, error: error))
        work.deliveries += handler.deliveries(of: .failed(error))
        // Their requests are over: a later load of this key (another user's retry) is not theirs to hear.
        handler.endUsersRequests()
        return work
    }
}

/// A decode to run after a fetch: which handler, which load of it, with which bytes.
struct DecodeJob: Sendable {
    let key: ObjectKey
    let generation: UInt64
    let decoder: AnyObjectDecoder
    let data: LoadedData
    let origin: DataOrigin
    let freshness: HTTPFreshness?
    /// Guards the variant this decode stores (`nil` for decoders that store none).
    var writeGate: WriteGate?
    /// Set when the bytes are a stale copy shown because revalidating them failed: the failure
    /// (users are told the object is stale).
    var staleAfterFailure: ManagedCacheError?
    /// Set when the bytes are a stale entry served at once under stale-while-revalidate: the
    /// object is revalidated in the background once delivered.
    var revalidatesAfterDelivery = false

    /// Whether the decoded object is known to be current, as users are told.
    var objectFreshness: ObjectFreshness {
        if let staleAfterFailure { return .stale(revalidationError: staleAfterFailure) }
        return revalidatesAfterDelivery ? .stale(revalidationError: nil) : .current
    }
}

// MARK: - Storing

extension LoadCore {
    /// The app stores `object` under `plan.key`: the key is taken from whatever had it
    /// (`_supersede`), and the object goes to the key's users and the memory cache at once.
    /// Returns what the store's write waits for.
    func _storeObject(_ object: any Sendable, plan: StorePlan, cost: Int, in state: inout ManagerState) -> (PendingWork, StoreTicket) {
        var work = PendingWork()
        let ticket = _supersede(for: plan, work: &work, in: &state)
        _ = state.handlers[plan.key]?.startStoring()
        _deliverStored(object, plan: plan, cost: cost, work: &work, in: &state)
        return (work, ticket)
    }

    /// The app stores an object it is still making: the key is taken (`_supersede`), and its
    /// handler (made if need be) waits for the object; users managed meanwhile join it. Returns
    /// the generation the object is for.
    func _startStoring(
        _ plan: StorePlan, request: ObjectRequest, decoder: @autoclosure () -> AnyObjectDecoder, in state: inout ManagerState
    ) -> (PendingWork, StoreTicket, UInt64) {
        var work = PendingWork()
        let ticket = _supersede(for: plan, work: &work, in: &state)
        let handler: ObjectHandler
        if let existing = state.handlers[plan.key] {
            handler = existing
        } else {
            handler = ObjectHandler(key: plan.key, decoder: decoder(), request: request, policy: plan.policy)
            state.handlers[plan.key] = handler
        }
        return (work, ticket, handler.startStoring())
    }

    /// The object of `_startStoring` is made (or making it failed): stored, if the key still
    /// waits for it (the same generation); a failure fails the users waiting for it, with nothing
    /// remembered and nothing purged. `false` when the key no longer waits for it.
    func _finishStoring(
        _ made: Result<any Sendable, StoreError>, plan: StorePlan, cost: Int, generation: UInt64, in state: inout ManagerState
    ) -> (PendingWork, Bool) {
        var work = PendingWork()
        guard let handler = state.handlers[plan.key], handler.generation == generation, handler.phase.isLoaded else {
            return (work, false)
        }
        switch made {
        case .success(let object):
            _deliverStored(object, plan: plan, cost: cost, work: &work, in: &state)
        case .failure(let error):
            let failure = ManagedCacheError.decodingFailed(reason: error.description)
            handler.fail(failure)
            state.prefetchWatch.settleHandler(plan.key, .failed(failure))
            work.deliveries += handler.deliveries(of: .failed(failure))
            handler.endUsersRequests()
        }
        return (work, true)
    }

    /// A store's write is over (or will not happen): its gate leaves the table of pending
    /// stores, unless a later store of the file key has replaced it already.
    func _endPendingStore(_ gate: WriteGate, fileKey: String, in state: inout ManagerState) {
        if state.pendingStores[fileKey]?.gate === gate { state.pendingStores.removeValue(forKey: fileKey) }
    }

    /// Under the lock: takes the key from whatever had it. Its remembered failures and its old
    /// memory-cache object go; its load leaves its fetch (cancelled when nobody else wants it);
    /// every gate its pending writes go through is closed (the fetch's commit when the store
    /// writes the data key, the decode's variant, an earlier store's bytes).
    private func _supersede(for plan: StorePlan, work: inout PendingWork, in state: inout ManagerState) -> StoreTicket {
        let key = plan.key
        var ticket = StoreTicket()
        if plan.writesFile {
            state.failures.forget(dataKey: key.dataKey)
        } else {
            state.failures.forget(key)
        }
        if let removed = memoryCache.removeValue(forKey: key) { work.released.append(removed.object) }
        state.loadingBuffer.remove(key)
        if let handler = state.handlers[key] {
            if case .loading(let fetch) = handler.phase {
                ticket.superseded += _leaveFetch(key, fetch: fetch, closing: plan.writesDataKey, work: &work, in: &state)
            }
            if let fetch = handler.revalidatingFetch {
                ticket.superseded += _leaveFetch(key, fetch: fetch, closing: plan.writesDataKey, work: &work, in: &state)
            }
            if let gate = handler.writeGate {
                gate.close()
                ticket.superseded.append(gate)
            }
        }
        if plan.writesDataKey {
            undecodedData.removeValue(forKey: key.dataKey)
            if let fetch = state.fetches[key.dataKey] {
                fetch.writeGate.close()
                ticket.superseded.append(fetch.writeGate)
            }
        }
        // An earlier store's bytes still to be written under the same file key: replaced by these
        // bytes, or (without them) superseded when they are the same object key's.
        if let previous = state.pendingStores[plan.fileKey], plan.writesFile || previous.key == key {
            state.pendingStores.removeValue(forKey: plan.fileKey)
            previous.gate.close()
            ticket.superseded.append(previous.gate)
        }
        if plan.writesFile {
            let own = WriteGate()
            state.pendingStores[plan.fileKey] = PendingStore(key: key, gate: own)
            ticket.own = own
        }
        state.statistics.storedObjects += 1
        return ticket
    }

    /// Under the lock: `key`'s handler stops waiting for fetch `identifier`. A fetch nobody else
    /// wants is cancelled (freeing its prefetch slot); its gate is closed then, or when `closing`.
    private func _leaveFetch(
        _ key: ObjectKey, fetch identifier: UInt64, closing: Bool, work: inout PendingWork, in state: inout ManagerState
    ) -> [WriteGate] {
        guard let fetch = state.fetches[key.dataKey], fetch.identifier == identifier else { return [] }
        fetch.unsubscribe(key)
        if fetch.isWanted {
            _refreshPriority(dataKey: key.dataKey, in: &state)
            guard closing else { return [] }
        } else {
            work.cancel(fetch.task)  // after the lock, as every cancellation
            state.fetches.removeValue(forKey: key.dataKey)
            state.prefetchWatch.settleFetch(fetch.identifier, .cancelled)
            if fetch.inPrefetchLane {
                state.runningPrefetches -= 1
                work.append(_startQueuedPrefetches(in: &state))
            }
        }
        fetch.writeGate.close()
        return [fetch.writeGate]
    }

    /// Under the lock: the handler (after `startStoring`) becomes ready with `object` and its live
    /// users receive it; the object goes to the memory cache.
    private func _deliverStored(
        _ object: any Sendable, plan: StorePlan, cost: Int, work: inout PendingWork, in state: inout ManagerState
    ) {
        let stored = CachedObject(object: object, freshness: nil, cost: cost)
        if let handler = state.handlers[plan.key], handler.phase.isLoaded {
            handler.finishDecoding(stored, origin: .stored)
            state.prefetchWatch.settleHandler(plan.key, .loaded(.stored))
            work.deliveries += handler.deliveries(of: .ready(object, .stored))
        }
        if plan.policy.cacheInMemory {
            work.released += memoryCache.setValue(stored, forKey: plan.key, cost: cost).map(\.object)
        }
    }
}

/// What a store does, decided before the lock.
struct StorePlan: Sendable {
    let key: ObjectKey
    let policy: LoadPolicy
    /// The file-cache key the object's bytes go under: the data key, or the variant's key.
    let fileKey: String
    /// The caller asked for the file cache.
    let asksForFile: Bool
    /// The bytes go to the file cache (asked, a file cache exists, the policy allows it).
    let writesFile: Bool
    /// The bytes are pinned in the file cache.
    var pinned = false

    /// The bytes go under the data key itself (a decoder that stores no variant): the
    /// download of that key, whoever it is for, must not commit over them.
    var writesDataKey: Bool { writesFile && fileKey == key.dataKey }
}

/// A store whose bytes are still to be written (`ManagerState.pendingStores`).
struct PendingStore {
    /// The object key it stores.
    let key: ObjectKey
    /// The gate its write goes through.
    let gate: WriteGate
}

/// What `_supersede` took over: the writes the store's own write waits for, and its own gate.
struct StoreTicket: Sendable {
    /// Gates closed for the store; a write begun through one before is waited for.
    var superseded: [WriteGate] = []
    /// The store's own gate, when it writes the file cache.
    var own: WriteGate?
}

// MARK: - Prefetching

extension LoadCore {
    /// The app prefetches `requests` (`unloadable[i]`: why request `i` cannot load, if it
    /// cannot): each is queued, or the prefetch of it already queued or running takes `priority`;
    /// `batch` (a reporting prefetch) follows each outcome. Then queued prefetches start while
    /// slots are free.
    func _enqueuePrefetches(
        _ requests: [ObjectRequest], unloadable: [String?], decoder: AnyObjectDecoder?, priority: LoadPriority,
        batch: PrefetchBatch?, in state: inout ManagerState
    ) -> PendingWork {
        state.statistics.requests += requests.count
        for (index, request) in requests.enumerated() {
            if let reason = unloadable[index] {
                batch?.record(.failed(.invalidRequest(reason: reason)), at: index)
                continue
            }
            let identity = PrefetchQueue.Identity(dataKey: request.dataKey, decoder: decoder?.identifier)
            switch _reprioritizePrefetch(request, decoder: decoder, priority: priority, in: &state) {
            case nil:
                state.prefetchQueue.append(
                    PrefetchItem(request: request, decoder: decoder, priority: priority, sequence: state._makeIdentifier()))
                fallthrough
            case .queued?:
                if let batch { state.prefetchWatch.watchQueued(identity, .init(batch: batch, index: index)) }
            case .handler(let key)?:
                if let batch { state.prefetchWatch.watchHandler(key, .init(batch: batch, index: index)) }
            case .fetch(let identifier)?:
                if let batch { state.prefetchWatch.watchFetch(identifier, .init(batch: batch, index: index)) }
            }
        }
        return _startQueuedPrefetches(in: &state)
    }

    /// The app cancels the prefetches of the data keys `matches` accepts: those queued are
    /// dropped, those running stop unless a user waits for them.
    func _cancelPrefetching(where matches: (String) -> Bool, in state: inout ManagerState) -> PendingWork {
        state.prefetchQueue.removeAll(where: matches)
        state.prefetchWatch.settleQueued(where: matches, .cancelled)
        return _releasePrefetchHolds(where: matches, in: &state)
    }

    /// `cancelAll`: every load and prefetch stops; their users are told `.managerShutDown`.
    func _cancelAll(in state: inout ManagerState) -> PendingWork {
        state.prefetchQueue.removeAll()
        var work = PendingWork()
        for key in Array(state.handlers.keys) where state.handlers[key]?.phase.isBusy == true {
            work.append(_cancelHandler(key, reason: .managerShutDown, in: &state))
        }
        for (dataKey, fetch) in state.fetches {
            work.cancel(fetch.task)
            state.fetches.removeValue(forKey: dataKey)
        }
        state.runningPrefetches = 0
        state.prefetchWatch.settleAll(.cancelled)
        return work
    }

    /// Takes the prefetch's hold off every handler and fetch whose data key matches, cancelling
    /// what nobody else wants and lowering the priority of what somebody does.
    private func _releasePrefetchHolds(where matches: (String) -> Bool, in state: inout ManagerState) -> PendingWork {
        var work = PendingWork()
        for (key, handler) in state.handlers where handler.heldByPrefetch && matches(key.dataKey) {
            handler.releasePrefetch()
            state.prefetchWatch.settleHandler(key, .cancelled)
            if handler.hasLiveUsers {
                _refreshPriority(dataKey: key.dataKey, in: &state)
            } else {
                work.append(_cancelHandler(key, reason: .caller, in: &state))
            }
        }
        for (dataKey, fetch) in state.fetches where fetch.prefetchHolds > 0 && matches(dataKey) {
            fetch.prefetchHolds = 0
            state.prefetchWatch.settleFetch(fetch.identifier, .cancelled)
            if fetch.isWanted {
                _refreshPriority(dataKey: dataKey, in: &state)
            } else {
                work.cancel(fetch.task)
                state.fetches.removeValue(forKey: dataKey)
                state.statistics.loadsCancelled += 1
                if fetch.inPrefetchLane {
                    state.runningPrefetches -= 1
                    work.append(_startQueuedPrefetches(in: &state))
                }
            }
        }
        return work
    }

    /// Where a prefetch already under way for a request is.
    private enum PrefetchUnderWay {
        case queued
        case handler(ObjectKey)
        case fetch(UInt64)
    }

    /// When `request` is already queued or running as a prefetch with this decoder, gives it
    /// `priority` and says where it is; `nil` when it is not.
    private func _reprioritizePrefetch(
        _ request: ObjectRequest, decoder: AnyObjectDecoder?, priority: LoadPriority, in state: inout ManagerState
    ) -> PrefetchUnderWay? {
        let dataKey = request.dataKey
        if state.prefetchQueue.reprioritize(PrefetchQueue.Identity(dataKey: dataKey, decoder: decoder?.identifier), to: priority) {
            return .queued
        }
        if let decoder {
            let key = request.objectKey(variant: decoder.identifier)
            guard let handler = state.handlers[key], handler.heldByPrefetch, handler.phase.isBusy else { return nil }
            handler.reprioritizePrefetch(priority)
            _refreshPriority(dataKey: dataKey, in: &state)
            return .handler(key)
        }
        guard let fetch = state.fetches[dataKey], fetch.prefetchHolds > 0 else { return nil }
        fetch.prefetchPriority = priority
        _refreshPriority(dataKey: dataKey, in: &state)
        return .fetch(fetch.identifier)
    }

    /// Starts waiting prefetches while prefetch slots are free; skips those already satisfied or under way.
    func _startQueuedPrefetches(in state: inout ManagerState) -> PendingWork {
        let limit = max(1, configuration.prefetchConcurrency)
        while state.runningPrefetches < limit, let item = state.prefetchQueue.popNext() {
            let dataKey = item.request.dataKey
            let identity = item.identity
            let policy = item.request.policy(over: configuration.policy)
            guard let decoder = item.decoder else {
                let failure = state.failures.failure(forDataKey: dataKey, now: state.now)
                if _answerFromFailureMemory(failure, identity, policy: policy, in: &state) { continue }
                let fetchID: UInt64
                if let fetch = state.fetches[dataKey] {
                    fetch.prefetchHolds += 1
                    fetch.prefetchPriority = max(fetch.prefetchPriority, item.priority)
                    _refreshPriority(dataKey: dataKey, in: &state)
                    fetchID = fetch.identifier
                } else {
                    fetchID = _createFetch(
                        dataKey: dataKey, request: item.request, policy: policy, subscriber: nil,
                        inPrefetchLane: true, priority: item.priority, in: &state)
                }
                state.prefetchWatch.startedFetch(identity, fetchID)
                continue
            }
            let key = item.request.objectKey(variant: decoder.identifier)
            if memoryCache.contains(key) {
                state.prefetchWatch.settleQueued(identity, .alreadyCached(.memory))
                continue
            }
            let handler = state.handlers[key] ?? ObjectHandler(key: key, decoder: decoder, request: item.request, policy: policy)
            switch handler.phase {
            case .ready:
                state.prefetchWatch.settleQueued(identity, .alreadyCached(.sharedObject))
                continue
            case .loading, .loaded:
                // Under way for users: the prefetch's outcome is that load's.
                state.prefetchWatch.startedHandler(identity, key)
                continue
            case .new, .failed:
                let failure = state.failures.failure(for: key, now: state.now)
                if _answerFromFailureMemory(failure, identity, policy: policy, in: &state) { continue }
                handler.adopt(request: item.request, policy: policy)
                let fetchID: UInt64
                state.handlers[key] = handler
                if let fetch = state.fetches[dataKey] {
                    fetch.subscribe(key, decoder: handler.decoder)
                    fetchID = fetch.identifier
                } else {
                    fetchID = _createFetch(
                        dataKey: dataKey, request: item.request, policy: policy, subscriber: key,
                        inPrefetchLane: true, priority: item.priority, in: &state)
                }
                handler.startPrefetch(fetch: fetchID, priority: item.priority)
                state.handlers[key] = handler
                _refreshPriority(dataKey: dataKey, in: &state)
                state.prefetchWatch.startedHandler(identity, key)
            }
        }
        return PendingWork()
    }

    /// A prefetch of a key that failed moments ago is answered as a `manage` of it is: with
    /// `recentlyFailed`, counted, and without a request. `false` when nothing is remembered.
    private func _answerFromFailureMemory(
        _ failure: ManagedCacheError?, _ identity: PrefetchQueue.Identity, policy: LoadPolicy, in state: inout ManagerState
    ) -> Bool {
        guard policy.failureMemoryInterval > 0, let failure else { return false }
        state.statistics.failures[.recentlyFailed, default: 0] += 1
        state.prefetchWatch.settleQueued(identity, .failed(.recentlyFailed(failure)))
        return true
    }

    /// Stops preloads: a real request needs the disk now.
    /// The tasks are cancelled once the lock is released (`decide` hands them to the work it
    /// returns): cancelling runs their cancellation handlers.
    func _cancelPreloads(in state: inout ManagerState) {
        guard !state.preloads.isEmpty else { return }
        state.preloadsToCancel += state.preloads
        state.preloads.removeAll()
    }
}

// MARK: - Removing and shutting down

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

// MARK: - Sweeping the tables

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
        while examined < budget, let user = state.sweep.nextAttachment() {
            examined += 1
            if state.attachments[user]?.isAlive == false, let record = state._removeAttachment(of: user.identifier) {
                retired.append(record)
            }
        }
        if state.sweep.hasExaminedAll { state.sweep.end(handlers: state.handlers.count, attachments: state.attachments.count) }
        return retired
    }
}
