import Foundation

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
        var record = state.attachments[call.userID]
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
