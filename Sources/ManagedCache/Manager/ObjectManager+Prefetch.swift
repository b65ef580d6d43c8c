import Foundation

extension ObjectManager {
    /// Loads `requests` into the caches with no user attached: the next photos of an album, the
    /// rows just below the screen. With no decoder the bytes go to the file cache (or, without one,
    /// stay in memory undecoded up to `undecodedDataLimit`).
    ///
    /// Prefetches run at most `prefetchConcurrency` at a time and never take a loading-buffer slot,
    /// so they never cancel loads that users wait for. A user that asks for a key being prefetched
    /// joins that load instead of starting another.
    public func prefetch(_ requests: [ObjectRequest]) {
        enqueuePrefetches(requests.map { PrefetchItem(request: $0, decoder: nil) })
    }

    /// Loads and decodes `requests` into the memory cache ahead of use, with `decoder`.
    public func prefetch<Decoder: ObjectDecoding>(_ requests: [ObjectRequest], decoder: Decoder) {
        let erased = AnyObjectDecoder(decoder)
        enqueuePrefetches(requests.map { PrefetchItem(request: $0, decoder: erased) })
    }

    /// Drops the prefetches not started yet and stops those running that no user waits for.
    public func cancelPrefetching() {
        let work = state.withLock { state -> PendingWork in
            state.prefetchQueue.removeAll()
            var work = PendingWork()
            for key in Array(state.handlers.keys) where state.handlers[key]?.heldByPrefetch == true {
                state.handlers[key]?.heldByPrefetch = false
                if state.handlers[key]?.hasLiveUsers == false {
                    work.append(_cancelHandler(key, reason: .caller, in: &state))
                }
            }
            for (dataKey, var fetch) in state.fetches where fetch.prefetchHolds > 0 {
                fetch.prefetchHolds = 0
                if fetch.isWanted {
                    state.fetches[dataKey] = fetch
                } else {
                    fetch.task?.cancel()
                    state.fetches.removeValue(forKey: dataKey)
                    state.statistics.loadsCancelled += 1
                    if fetch.inPrefetchLane { state.runningPrefetches -= 1 }
                }
            }
            return work
        }
        perform(work)
    }

    /// The number of prefetches waiting for a slot.
    public var pendingPrefetchCount: Int { state.withLock { $0.prefetchQueue.count } }

    private func enqueuePrefetches(_ items: [PrefetchItem]) {
        let valid = items.filter { !$0.request.dataKey.isEmpty && configuration.dataLoader.canLoad($0.request.url) }
        let work = state.withLock { state -> PendingWork in
            state.statistics.requests += items.count
            state.prefetchQueue += valid
            return _startQueuedPrefetches(in: &state)
        }
        perform(work)
    }

    /// Starts waiting prefetches while prefetch slots are free; skips those already satisfied or under way.
    func _startQueuedPrefetches(in state: inout ManagerState) -> PendingWork {
        let limit = max(1, configuration.prefetchConcurrency)
        while state.runningPrefetches < limit, !state.prefetchQueue.isEmpty {
            let item = state.prefetchQueue.removeFirst()
            let dataKey = item.request.dataKey
            let policy = configuration.policy.applying(item.request.policy)
            guard let decoder = item.decoder else {
                if var fetch = state.fetches[dataKey] {
                    fetch.prefetchHolds += 1
                    state.fetches[dataKey] = fetch
                } else {
                    _ = _createFetch(dataKey: dataKey, request: item.request, policy: policy, subscriber: nil,
                                     inPrefetchLane: true, in: &state)
                }
                continue
            }
            let key = item.request.objectKey(variant: decoder.identifier)
            if memoryCache.contains(key) { continue }
            let handler = state.handlers[key] ?? HandlerRecord(key: key, decoder: decoder, request: item.request, policy: policy)
            switch handler.phase {
            case .ready, .loading, .loaded:
                continue
            case .new, .failed:
                if state.failures.failure(for: key) != nil { continue }
                handler.request = item.request
                handler.policy = policy
                handler.heldByPrefetch = true
                handler.generation &+= 1
                let fetchID: UInt64
                if var fetch = state.fetches[dataKey] {
                    fetch.subscribers.insert(key)
                    state.fetches[dataKey] = fetch
                    fetchID = fetch.identifier
                } else {
                    state.handlers[key] = handler
                    fetchID = _createFetch(dataKey: dataKey, request: item.request, policy: policy, subscriber: key,
                                           inPrefetchLane: true, in: &state)
                }
                handler.phase = .loading(fetch: fetchID)
                state.handlers[key] = handler
            }
        }
        return PendingWork()
    }
}
