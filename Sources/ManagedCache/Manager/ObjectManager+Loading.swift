import Foundation

extension ObjectManager {
    // MARK: - Starting and joining loads (under the lock)

    /// Moves the handler of `key` to loading: joins the fetch of its data key or starts one, and
    /// takes a loading-buffer slot when `evictable`.
    func _startLoading(_ key: ObjectKey, evictable: Bool, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key] else { return PendingWork() }
        var work = PendingWork()
        let fetchID: UInt64
        if var fetch = state.fetches[key.dataKey] {
            fetch.subscribers.insert(key)
            state.fetches[key.dataKey] = fetch
            fetchID = fetch.identifier
            state.statistics.coalescedJoins += 1
            if evictable { _promoteFetchFromPrefetchLane(dataKey: key.dataKey, fetch: fetchID, work: &work, in: &state) }
        } else {
            fetchID = _createFetch(dataKey: key.dataKey, request: handler.request, policy: handler.policy,
                                   subscriber: key, inPrefetchLane: false, validators: handler.staleObject?.freshness,
                                   in: &state)
        }
        handler.generation &+= 1
        handler.phase = .loading(fetch: fetchID)
        state.handlers[key] = handler
        if evictable { work.append(_pushToLoadingBuffer(key, in: &state)) }
        return work
    }

    /// Starts the one fetch of `dataKey`. Returns its identifier.
    func _createFetch(
        dataKey: String, request: ObjectRequest, policy: LoadPolicy, subscriber: ObjectKey?,
        inPrefetchLane: Bool, validators: HTTPFreshness? = nil, in state: inout ManagerState
    ) -> UInt64 {
        let identifier = state._makeIdentifier()
        if !inPrefetchLane { _cancelPreloads(in: &state) }
        var fetch = FetchRecord(identifier: identifier, dataKey: dataKey, request: request, policy: policy,
                                inPrefetchLane: inPrefetchLane)
        if let subscriber { fetch.subscribers.insert(subscriber) } else { fetch.prefetchHolds = 1 }
        if inPrefetchLane {
            state.runningPrefetches += 1
            state.statistics.prefetchesStarted += 1
        }
        let operation = FetchOperation(
            dataKey: dataKey, request: request, policy: policy, loader: configuration.dataLoader,
            fileCache: fileCache, undecoded: undecodedData, inMemoryThreshold: configuration.inMemoryThreshold,
            memoryValidators: validators, callbacks: makeFetchCallbacks(dataKey: dataKey, fetch: identifier))
        fetch.task = Task(executorPreference: LoadingExecutor.shared) { [weak self] in
            let result = await operation.run()
            guard let jobs = self?.completeFetch(dataKey: dataKey, fetch: identifier, result: result) else { return }
            for job in jobs {
                let outcome = job.decoder.decode(job.data)
                // Deliver first (the users are waiting), then store the variant, on this task.
                self?.completeDecode(job, outcome: outcome)
                if case .success(let object) = outcome { self?.storeVariantIfNeeded(job, object: object) }
            }
        }
        state.fetches[dataKey] = fetch
        return identifier
    }

    /// A fetch running in the prefetch lane that a user now waits for leaves the lane (freeing a
    /// prefetch slot) and becomes an ordinary load.
    func _promoteFetchFromPrefetchLane(dataKey: String, fetch identifier: UInt64, work: inout PendingWork, in state: inout ManagerState) {
        guard var fetch = state.fetches[dataKey], fetch.identifier == identifier, fetch.inPrefetchLane else { return }
        fetch.inPrefetchLane = false
        state.fetches[dataKey] = fetch
        state.runningPrefetches -= 1
        work.append(_startQueuedPrefetches(in: &state))
    }

    /// Puts `key` in the loading buffer as its newest load and cancels what that pushes out.
    func _pushToLoadingBuffer(_ key: ObjectKey, in state: inout ManagerState) -> PendingWork {
        var work = PendingWork()
        // Loads whose users have all gone, under a policy that cancels those, leave first.
        for waiting in state.loadingBuffer.keys where waiting != key {
            work.append(_cancelIfAbandoned(waiting, in: &state))
        }
        work.append(_handleBufferOverflow(state.loadingBuffer.push(key), in: &state))
        return work
    }

    /// Cancels the loads pushed out of the loading buffer, unless a user that is not subject to the
    /// buffer (an `async` caller) or a prefetch still wants them: those just leave the buffer.
    func _handleBufferOverflow(_ pushedOut: [ObjectKey], in state: inout ManagerState) -> PendingWork {
        var work = PendingWork()
        for key in pushedOut {
            guard let handler = state.handlers[key], case .loading = handler.phase else { continue }
            if handler.hasLiveUnevictableUsers || handler.heldByPrefetch { continue }
            work.append(_cancelHandler(key, reason: .loadingBufferOverflow, in: &state))
        }
        return work
    }

    /// Stops the handler of `key`: back to `.new`, out of the buffer and its fetch (which is
    /// cancelled when nobody else wants it); its live users are told why.
    func _cancelHandler(_ key: ObjectKey, reason: ManagedCacheError.CancellationReason, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key], handler.phase.isBusy else { return PendingWork() }
        var work = PendingWork()
        handler.phase = .new
        handler.generation &+= 1
        handler.heldByPrefetch = false
        handler.compactUsers()
        state.handlers[key] = handler
        state.loadingBuffer.remove(key)
        state.statistics.loadsCancelled += 1
        if reason == .loadingBufferOverflow { state.statistics.loadsCancelledByBuffer += 1 }
        if var fetch = state.fetches[key.dataKey] {
            fetch.subscribers.remove(key)
            if fetch.isWanted {
                state.fetches[key.dataKey] = fetch
            } else {
                fetch.task?.cancel()
                state.fetches.removeValue(forKey: key.dataKey)
                if fetch.inPrefetchLane {
                    state.runningPrefetches -= 1
                    work.append(_startQueuedPrefetches(in: &state))
                }
            }
        }
        for slot in handler.users {
            guard let user = slot.user else { continue }
            work.deliveries.append(PendingDelivery(
                user: user, request: slot.request, key: key, attachment: slot.attachment,
                event: .failed(.cancelled(reason))))
        }
        // Their requests are over: a restart of this key by anyone else is not theirs to hear.
        state.handlers[key]?.users.removeAll()
        return work
    }

    // MARK: - Fetch callbacks (from the fetch's task)

    private func makeFetchCallbacks(dataKey: String, fetch identifier: UInt64) -> FetchCallbacks {
        FetchCallbacks(
            progress: { [weak self] progress, newBytes in
                self?.fetchProgressed(dataKey: dataKey, fetch: identifier, progress: progress, newBytes: newBytes)
            },
            requestSent: { [weak self] conditional in
                self?.state.withLock { state in
                    state.statistics.networkRequests += 1
                    if conditional { state.statistics.revalidations += 1 }
                }
            },
            event: { [weak self] event in
                self?.report(event)
            })
    }

    func report(_ event: ManagerEvent) {
        switch event {
        case .fileCacheFailure, .corruptEntryRemoved:
            state.withLock { $0.statistics.fileCacheErrors += 1 }
        case .loadFailed:
            break
        }
        configuration.eventHandler?(event)
    }

    private func fetchProgressed(dataKey: String, fetch identifier: UInt64, progress: LoadProgress, newBytes: Int) {
        let work = state.withLock { state -> PendingWork in
            state.statistics.bytesDownloaded += newBytes
            guard var fetch = state.fetches[dataKey], fetch.identifier == identifier else { return PendingWork() }
            fetch.progress = progress
            state.fetches[dataKey] = fetch
            var work = PendingWork()
            for key in fetch.subscribers {
                work.append(_cancelIfAbandoned(key, in: &state))
                guard let handler = state.handlers[key], case .loading = handler.phase else { continue }
                for slot in handler.users {
                    guard let user = slot.user else { continue }
                    work.deliveries.append(PendingDelivery(
                        user: user, request: slot.request, key: key, attachment: slot.attachment,
                        event: .progress(progress), fetch: identifier))
                }
            }
            return work
        }
        perform(work)
    }

    /// A decode to run after a fetch: which handler, which load of it, with which bytes.
    struct DecodeJob: Sendable {
        let key: ObjectKey
        let generation: UInt64
        let decoder: AnyObjectDecoder
        let data: LoadedData
        let origin: DataOrigin
        let freshness: HTTPFreshness?
    }

    /// Records the end of a fetch and returns the decodes it enables.
    func completeFetch(dataKey: String, fetch identifier: UInt64, result: Result<FetchedData, ManagedCacheError>) -> [DecodeJob] {
        var jobs: [DecodeJob] = []
        let work = state.withLock { state -> PendingWork in
            guard let fetch = state.fetches[dataKey], fetch.identifier == identifier else { return PendingWork() }
            state.fetches.removeValue(forKey: dataKey)
            var work = PendingWork()
            if fetch.inPrefetchLane {
                state.runningPrefetches -= 1
                work.append(_startQueuedPrefetches(in: &state))
            }
            switch result {
            case .success(let fetched):
                switch fetched.origin {
                case .network: state.statistics.networkLoads += 1
                case .fileCache: state.statistics.fileCacheHits += 1
                case .undecodedData: state.statistics.undecodedDataHits += 1
                case .revalidated: state.statistics.notModified += 1
                case .memory, .sharedObject: break
                }
                for key in fetch.subscribers {
                    guard let handler = state.handlers[key], handler.isWaiting(for: identifier) else { continue }
                    if fetched.notModified, let stale = handler.staleObject {
                        work.append(_revalidated(key, object: stale.object, freshness: fetched.freshness, in: &state))
                        continue
                    }
                    guard fetched.hasBytes else {
                        // A 304 for bytes this decoder never had: load them unconditionally.
                        handler.phase = .new
                        handler.staleObject = nil
                        handler.revalidatingFetch = nil
                        state.handlers[key] = handler
                        work.append(_startLoading(key, evictable: false, in: &state))
                        continue
                    }
                    handler.phase = .loaded
                    handler.revalidatingFetch = nil
                    state.handlers[key] = handler
                    state.loadingBuffer.remove(key)
                    jobs.append(DecodeJob(
                        key: key, generation: handler.generation, decoder: handler.decoder,
                        data: fetched.loadedData(prefersFileURL: handler.decoder.prefersFileURL), origin: fetched.origin,
                        freshness: fetched.freshness))
                }
                if jobs.isEmpty, fetched.entry == nil, let data = fetched.memory {
                    // Nobody decodes these bytes yet and no file holds them: keep them (HJCache's "loaded" state).
                    work.released += undecodedData.setValue(data, forKey: dataKey, cost: data.count)
                }
            case .failure(let error):
                if case .cancelled = error { break }
                state.statistics.failures[error.kind, default: 0] += 1
                state.failures.record(error, forDataKey: dataKey, interval: fetch.policy.failureMemoryInterval)
                for key in fetch.subscribers {
                    guard let handler = state.handlers[key], handler.isWaiting(for: identifier) else { continue }
                    if let stale = handler.staleObject, error.isTransient, stale.freshness?.mustRevalidate != true {
                        // Stale-if-error: the network failed, the object we had is still better than nothing.
                        work.append(_revalidated(key, object: stale.object, freshness: stale.freshness, in: &state))
                    } else if handler.revalidatingFetch == identifier {
                        handler.revalidatingFetch = nil
                        handler.staleObject = nil
                        state.handlers[key] = handler
                    } else {
                        work.append(_fail(key, error: error, generation: nil, in: &state))
                    }
                }
            }
            return work
        }
        perform(work)
        return jobs
    }

    /// Records a decode's outcome: the shared object goes to the memory cache and every live user;
    /// a failure purges the key from every cache.
    func completeDecode(_ job: DecodeJob, outcome: Result<any Sendable, ManagedCacheError>, synchronousUser: ObjectIdentifier? = nil) {
        let work = state.withLock { state -> PendingWork in
            guard let handler = state.handlers[job.key], handler.generation == job.generation,
                  case .loaded = handler.phase else { return PendingWork() }
            switch outcome {
            case .success(let object):
                var work = PendingWork()
                state.statistics.decodes += 1
                handler.heldByPrefetch = false
                handler.staleObject = nil
                handler.freshness = job.freshness
                handler.objectCost = handler.decoder.cost(of: object, byteCount: job.data.byteCount)
                handler.compactUsers()
                // With no user left, only the memory cache keeps the object (within its limits).
                handler.phase = handler.users.isEmpty ? .new : .ready(object, job.origin)
                state.handlers[job.key] = handler
                if handler.policy.cacheInMemory {
                    work.released += memoryCache.setValue(
                        CachedObject(object: object, freshness: job.freshness, cost: handler.objectCost),
                        forKey: job.key, cost: handler.objectCost
                    ).map(\.object)
                }
                for slot in handler.users {
                    guard let user = slot.user else { continue }
                    work.deliveries.append(PendingDelivery(
                        user: user, request: slot.request, key: job.key, attachment: slot.attachment,
                        event: .ready(object, job.origin)))
                }
                return work
            case .failure(let error):
                state.statistics.failures[error.kind, default: 0] += 1
                state.failures.record(error, for: job.key, interval: handler.policy.failureMemoryInterval)
                return _fail(job.key, error: error, generation: job.generation, in: &state)
            }
        }
        perform(work, synchronousUser: synchronousUser)
    }

    /// A stale object is current again (a `304`, or stale-if-error): back to ready with new
    /// freshness, into the memory cache, and to the users waiting for it.
    func _revalidated(_ key: ObjectKey, object: any Sendable, freshness: HTTPFreshness?, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key] else { return PendingWork() }
        var work = PendingWork()
        let wasWaiting = handler.revalidatingFetch == nil  // a background revalidation's users already have it
        handler.phase = .ready(object, .revalidated)
        handler.freshness = freshness
        handler.staleObject = nil
        handler.revalidatingFetch = nil
        handler.compactUsers()
        state.handlers[key] = handler
        state.loadingBuffer.remove(key)
        if handler.policy.cacheInMemory {
            work.released += memoryCache.setValue(
                CachedObject(object: object, freshness: freshness, cost: handler.objectCost), forKey: key,
                cost: handler.objectCost
            ).map(\.object)
        }
        guard wasWaiting else { return work }
        for slot in handler.users {
            guard let user = slot.user else { continue }
            work.deliveries.append(PendingDelivery(
                user: user, request: slot.request, key: key, attachment: slot.attachment,
                event: .ready(object, .revalidated)))
        }
        return work
    }

    /// Moves the handler of `key` to failed, purges the key from every cache and tells its users.
    func _fail(_ key: ObjectKey, error: ManagedCacheError, generation: UInt64?, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key] else { return PendingWork() }
        if let generation, handler.generation != generation { return PendingWork() }
        var work = PendingWork()
        handler.phase = .failed(error)
        handler.heldByPrefetch = false
        handler.compactUsers()
        state.handlers[key] = handler
        state.loadingBuffer.remove(key)
        if let removed = memoryCache.removeValue(forKey: key) { work.released.append(removed.object) }
        handler.staleObject = nil
        handler.revalidatingFetch = nil
        state.handlers[key] = handler
        undecodedData.removeValue(forKey: key.dataKey)
        if case .decodingFailed = error { work.fileCachePurges.append(key.dataKey) }
        work.events.append(.loadFailed(key: key, error: error))
        for slot in handler.users {
            guard let user = slot.user else { continue }
            work.deliveries.append(PendingDelivery(
                user: user, request: slot.request, key: key, attachment: slot.attachment, event: .failed(error)))
        }
        // Their requests are over: a later load of this key (another user's retry) is not theirs to hear.
        state.handlers[key]?.users.removeAll()
        return work
    }
}
