import Foundation

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
            let policy = configuration.policy.applying(item.request.policy)
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
