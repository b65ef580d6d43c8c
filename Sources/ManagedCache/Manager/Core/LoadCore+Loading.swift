import Foundation

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
