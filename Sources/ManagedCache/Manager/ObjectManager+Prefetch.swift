import Foundation

extension ObjectManager {
    /// Loads `requests` into the caches with no user attached: the next photos of an album, the
    /// rows just below the screen. With no decoder the bytes go to the file cache (or, without one,
    /// stay in memory undecoded up to `undecodedDataLimit`).
    ///
    /// Prefetches run at most `prefetchConcurrency` at a time, highest `priority` first, and never
    /// take a loading-buffer slot, so they never cancel loads that users wait for. A user that asks
    /// for a key being prefetched joins that load instead of starting another (and raises its
    /// priority to the user's). Prefetching a request that is already queued or running again
    /// only changes its priority.
    ///
    /// - Parameters:
    ///   - requests: What to load. Requests whose URL the data loader cannot load are ignored.
    ///   - priority: The prefetches' priority (default `.low`, below every user's default `.normal`);
    ///     it replaces the requests' own.
    public func prefetch(_ requests: [ObjectRequest], priority: LoadPriority = .low) {
        enqueuePrefetches(requests, decoder: nil, priority: priority)
    }

    /// Loads and decodes `requests` into the memory cache ahead of use, with `decoder`.
    ///
    /// - Parameters:
    ///   - requests: What to load.
    ///   - decoder: The decoder whose objects users will ask for (the same `identifier`).
    ///   - priority: The prefetches' priority (default `.low`).
    public func prefetch<Decoder: ObjectDecoding>(
        _ requests: [ObjectRequest], decoder: Decoder, priority: LoadPriority = .low
    ) {
        enqueuePrefetches(requests, decoder: AnyObjectDecoder(decoder), priority: priority)
    }

    /// Stops prefetching `requests` (a collection view's `cancelPrefetchingForItemsAt`): queued
    /// prefetches of their keys are dropped, and running ones stop unless a user waits for them —
    /// a load that a user joined keeps going for that user.
    ///
    /// - Parameter requests: The requests to stop prefetching, matched by key (`dataKey`), with
    ///   whatever decoder they were prefetched.
    public func cancelPrefetching(_ requests: [ObjectRequest]) {
        let dataKeys = Set(requests.map(\.dataKey))
        guard !dataKeys.isEmpty else { return }
        let work = state.withLock { state -> PendingWork in
            state.prefetchQueue.removeAll { dataKeys.contains($0) }
            return _releasePrefetchHolds(where: { dataKeys.contains($0) }, in: &state)
        }
        perform(work)
    }

    /// Drops the prefetches not started yet and stops those running that no user waits for.
    public func cancelPrefetching() {
        let work = state.withLock { state -> PendingWork in
            state.prefetchQueue.removeAll()
            return _releasePrefetchHolds(where: { _ in true }, in: &state)
        }
        perform(work)
    }

    /// The number of prefetches waiting for a slot.
    public var pendingPrefetchCount: Int { state.withLock { $0.prefetchQueue.count } }

    /// Takes the prefetch's hold off every handler and fetch whose data key matches, cancelling
    /// what nobody else wants and lowering the priority of what somebody does.
    private func _releasePrefetchHolds(where matches: (String) -> Bool, in state: inout ManagerState) -> PendingWork {
        var work = PendingWork()
        for (key, handler) in state.handlers where handler.heldByPrefetch && matches(key.dataKey) {
            handler.releasePrefetch()
            if handler.hasLiveUsers {
                _refreshPriority(dataKey: key.dataKey, in: &state)
            } else {
                work.append(_cancelHandler(key, reason: .caller, in: &state))
            }
        }
        for (dataKey, fetch) in state.fetches where fetch.prefetchHolds > 0 && matches(dataKey) {
            fetch.prefetchHolds = 0
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

    private func enqueuePrefetches(_ requests: [ObjectRequest], decoder: AnyObjectDecoder?, priority: LoadPriority) {
        let valid = requests.filter { !$0.dataKey.isEmpty && configuration.dataLoader.canLoad($0.url) }
        let work = state.withLock { state -> PendingWork in
            state.statistics.requests += requests.count
            for request in valid where !_reprioritizePrefetch(request, decoder: decoder, priority: priority, in: &state) {
                state.prefetchQueue.append(
                    PrefetchItem(
                        request: request, decoder: decoder, priority: priority, sequence: state._makeIdentifier()))
            }
            return _startQueuedPrefetches(in: &state)
        }
        perform(work)
    }

    /// When `request` is already queued or running as a prefetch with this decoder, gives it
    /// `priority` and returns `true`.
    private func _reprioritizePrefetch(
        _ request: ObjectRequest, decoder: AnyObjectDecoder?, priority: LoadPriority, in state: inout ManagerState
    ) -> Bool {
        let dataKey = request.dataKey
        if state.prefetchQueue.reprioritize(PrefetchQueue.Identity(dataKey: dataKey, decoder: decoder?.identifier), to: priority) {
            return true
        }
        if let decoder {
            let key = request.objectKey(variant: decoder.identifier)
            guard let handler = state.handlers[key], handler.heldByPrefetch, handler.phase.isBusy else { return false }
            handler.reprioritizePrefetch(priority)
            _refreshPriority(dataKey: dataKey, in: &state)
            return true
        }
        guard let fetch = state.fetches[dataKey], fetch.prefetchHolds > 0 else { return false }
        fetch.prefetchPriority = priority
        _refreshPriority(dataKey: dataKey, in: &state)
        return true
    }

    /// Starts waiting prefetches while prefetch slots are free; skips those already satisfied or under way.
    func _startQueuedPrefetches(in state: inout ManagerState) -> PendingWork {
        let limit = max(1, configuration.prefetchConcurrency)
        while state.runningPrefetches < limit, let item = state.prefetchQueue.popNext() {
            let dataKey = item.request.dataKey
            let policy = configuration.policy.applying(item.request.policy)
            guard let decoder = item.decoder else {
                if let fetch = state.fetches[dataKey] {
                    fetch.prefetchHolds += 1
                    fetch.prefetchPriority = max(fetch.prefetchPriority, item.priority)
                    _refreshPriority(dataKey: dataKey, in: &state)
                } else {
                    _ = _createFetch(
                        dataKey: dataKey, request: item.request, policy: policy, subscriber: nil,
                        inPrefetchLane: true, priority: item.priority, in: &state)
                }
                continue
            }
            let key = item.request.objectKey(variant: decoder.identifier)
            if memoryCache.contains(key) { continue }
            let handler = state.handlers[key] ?? ObjectHandler(key: key, decoder: decoder, request: item.request, policy: policy)
            switch handler.phase {
            case .ready, .loading, .loaded:
                continue
            case .new, .failed:
                if state.failures.failure(for: key, now: configuration.failureClock()) != nil { continue }
                handler.request = item.request
                handler.policy = policy
                let fetchID: UInt64
                state.handlers[key] = handler
                if let fetch = state.fetches[dataKey] {
                    fetch.subscribers.insert(key)
                    fetchID = fetch.identifier
                } else {
                    fetchID = _createFetch(
                        dataKey: dataKey, request: item.request, policy: policy, subscriber: key,
                        inPrefetchLane: true, priority: item.priority, in: &state)
                }
                handler.startPrefetch(fetch: fetchID, priority: item.priority)
                state.handlers[key] = handler
                _refreshPriority(dataKey: dataKey, in: &state)
            }
        }
        return PendingWork()
    }
}
