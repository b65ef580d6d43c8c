import Foundation

extension ObjectManager {
    // MARK: - Starting and joining loads (under the lock)

    /// Moves the handler of `key` to loading: joins the fetch of its data key or starts one, and
    /// takes a loading-buffer slot when `evictable`.
    func _startLoading(_ key: ObjectKey, evictable: Bool, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key] else { return PendingWork() }
        var work = PendingWork()
        if let fetch = state.fetches[key.dataKey] {
            fetch.subscribers.insert(key)
            state.statistics.coalescedJoins += 1
            handler.startLoading(fetch: fetch.identifier)
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
        }
        if evictable {
            work.append(_pushToLoadingBuffer(key, in: &state))
        } else {
            _refreshPriority(dataKey: key.dataKey, in: &state)
        }
        return work
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
            inPrefetchLane: inPrefetchLane, task: FetchTaskSlot(), priority: priorityCell)
        if let subscriber {
            fetch.subscribers.insert(subscriber)
        } else {
            fetch.prefetchHolds = 1
            fetch.prefetchPriority = priority
        }
        if inPrefetchLane {
            state.runningPrefetches += 1
            state.statistics.prefetchesStarted += 1
        }
        // The task is created once the lock is released (`ManagerLock`: creating a task may wake a
        // thread), and the operation in the task (allocations the lock need not cover).
        let writeGate = fetch.writeGate
        state.fetchStarts.append(
            FetchStart(slot: fetch.task, running: fetchTasksRunning) { [weak self] in
                guard
                    let operation = self?.makeFetchOperation(
                        dataKey: dataKey, request: request, policy: policy, validators: validators, priority: priorityCell,
                        fetch: identifier, writeGate: writeGate, paced: paced, forUsers: subscriber != nil)
                else { return }
                let result = await operation.run()
                guard let jobs = self?.completeFetch(dataKey: dataKey, fetch: identifier, result: result) else { return }
                for job in jobs {
                    let outcome = job.decoder.decode(job.data)
                    if case .failure = outcome, job.origin == .fileCache, job.data.fileCacheEntryVanished {
                        // Removed by another instance between the read and the decode: a miss.
                        self?.fileCache?.removeEntry(forKey: dataKey)
                        self?.loadAfterFileCacheEntryFailed(job)
                        continue
                    }
                    // Deliver first (the users are waiting), then store the variant, on this task.
                    self?.completeDecode(job, outcome: outcome)
                    if case .success(let object) = outcome { self?.storeVariantIfNeeded(job, object: object) }
                }
            })
        state.fetches[dataKey] = fetch
        return identifier
    }

    /// The download of a fetch, made in its task.
    private func makeFetchOperation(
        dataKey: String, request: ObjectRequest, policy: LoadPolicy, validators: HTTPFreshness?, priority: LoadPriorityCell,
        fetch identifier: UInt64, writeGate: WriteGate, paced: Bool, forUsers: Bool
    ) -> FetchOperation {
        var operation = FetchOperation(
            dataKey: dataKey, request: request, policy: policy, loader: configuration.dataLoader,
            fileCache: fileCache, undecoded: undecodedData, inMemoryThreshold: configuration.inMemoryThreshold,
            memoryValidators: validators, priority: priority,
            callbacks: makeFetchCallbacks(dataKey: dataKey, fetch: identifier), writeGate: writeGate,
            rateLimiter: paced ? loadRateLimiter : nil)
        operation.mayServeStaleAtOnce = forUsers
        return operation
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
        state.prefetchWatch.settleHandler(key, .cancelled)
        handler.cancel()
        handler.compactUsers()
        state.loadingBuffer.remove(key)
        state.statistics.loadsCancelled += 1
        if reason == .loadingBufferOverflow { state.statistics.loadsCancelledByBuffer += 1 }
        if let fetch = state.fetches[key.dataKey] {
            fetch.subscribers.remove(key)
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

    // MARK: - Fetch callbacks (from the fetch's task)

    private func makeFetchCallbacks(dataKey: String, fetch identifier: UInt64) -> FetchCallbacks {
        let previews = PreviewFeed(interval: configuration.previewInterval)
        return FetchCallbacks(
            progress: { [weak self] progress, newBytes in
                self?.fetchProgressed(dataKey: dataKey, fetch: identifier, progress: progress, newBytes: newBytes)
            },
            requestSent: { [weak self] conditional in
                self?.transferCounters.withLock { counters in
                    counters.networkRequests += 1
                    if conditional { counters.revalidations += 1 }
                }
            },
            event: { [weak self] event in
                self?.report(event)
            },
            bytes: { [weak self] chunk, offset in
                self?.previewBytesArrived(chunk, offset: offset, feed: previews, dataKey: dataKey, fetch: identifier)
            })
    }

    func report(_ event: ManagerEvent) {
        switch event {
        case .fileCacheFailure, .corruptEntryRemoved:
            transferCounters.withLock { $0.fileCacheErrors += 1 }
        case .loadFailed:
            break
        }
        configuration.eventHandler?(event)
    }

    private func fetchProgressed(dataKey: String, fetch identifier: UInt64, progress: LoadProgress, newBytes: Int) {
        transferCounters.withLock { $0.bytesDownloaded += newBytes }
        let work = state.withLock { state -> PendingWork in
            guard let fetch = state.fetches[dataKey], fetch.identifier == identifier else { return PendingWork() }
            fetch.progress = progress
            var work = PendingWork()
            for key in fetch.subscribers {
                work.append(_cancelIfAbandoned(key, in: &state))
                guard let handler = state.handlers[key], case .loading = handler.phase else { continue }
                work.deliveries += handler.deliveries(of: .progress(progress), fetch: identifier)
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

    /// Records the end of a fetch and returns the decodes it enables.
    func completeFetch(dataKey: String, fetch identifier: UInt64, result: Result<FetchedData, ManagedCacheError>) -> [DecodeJob] {
        var jobs: [DecodeJob] = []
        let now = Date()  // for stale-if-error, read before the lock
        let work = state.withLock { state -> PendingWork in
            // 1. The fetch ends (a stale result of a replaced fetch changes nothing).
            guard let fetch = _endFetch(dataKey: dataKey, identifier: identifier, in: &state) else { return PendingWork() }
            var work = PendingWork()
            state.prefetchWatch.settleFetch(identifier, PrefetchOutcome(fetchResult: result))
            // 2. Its prefetch slot, if it had one, goes to the next waiting prefetch.
            if fetch.inPrefetchLane { work.append(_startQueuedPrefetches(in: &state)) }
            // 3. Every handler waiting for it decodes the bytes, revalidates, restarts or fails.
            switch result {
            case .success(let fetched):
                jobs = _bytesArrived(fetched, for: fetch, work: &work, in: &state)
            case .failure(let error):
                _fetchFailed(error, for: fetch, now: now, work: &work, in: &state)
            }
            return work
        }
        // 4. Users hear what was decided; the decode jobs run on the caller's task.
        perform(work)
        return jobs
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
    /// without validators (a `304` for bytes it never had), or gets a decode job. Bytes nobody
    /// decodes and no file holds are kept in memory (HJCache's "loaded" state).
    private func _bytesArrived(
        _ fetched: FetchedData, for fetch: FetchRecord, work: inout PendingWork, in state: inout ManagerState
    ) -> [DecodeJob] {
        state.statistics.count(fetched.origin)
        var jobs: [DecodeJob] = []
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
            jobs.append(
                DecodeJob(
                    key: key, generation: handler.generation, decoder: handler.decoder,
                    data: fetched.loadedData(prefersFileURL: handler.decoder.prefersFileURL), origin: fetched.origin,
                    freshness: fetched.freshness, writeGate: handler.decoder.storesVariant ? handler.openWriteGate() : nil,
                    staleAfterFailure: fetched.staleAfterFailure, revalidatesAfterDelivery: fetched.servedWhileRevalidating))
        }
        if jobs.isEmpty, fetched.entry == nil, let data = fetched.memory {
            work.released += undecodedData.setValue(data, forKey: fetch.dataKey, cost: data.count)
        }
        return jobs
    }

    /// The fetch failed (a cancellation changes nothing): the failure is remembered, and each
    /// waiting handler serves its stale object when `StaleIfError` allows it (the same decision
    /// as for a stale file entry, at `now`), ends its background revalidation, or fails.
    private func _fetchFailed(
        _ error: ManagedCacheError, for fetch: FetchRecord, now: Date, work: inout PendingWork, in state: inout ManagerState
    ) {
        if case .cancelled = error { return }
        state.statistics.failures[error.kind, default: 0] += 1
        state.failures.record(error, forDataKey: fetch.dataKey, policy: fetch.policy, now: configuration.failureClock())
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

    /// Records a decode's outcome: the shared object goes to the memory cache and every live user;
    /// a failure purges the key from every cache. `countingFileCacheHit`: the bytes were a
    /// file-cache hit, counted in `statistics` whatever the outcome.
    func completeDecode(
        _ job: DecodeJob, outcome: Result<any Sendable, ManagedCacheError>, synchronousUser: ObjectIdentifier? = nil,
        countingFileCacheHit: Bool = false
    ) {
        let section: @Sendable (inout ManagerState) -> PendingWork = { [self] state in
            _completeDecode(job, outcome: outcome, countingFileCacheHit: countingFileCacheHit, in: &state)
        }
        performSection(section, synchronousUser: synchronousUser)
    }

    /// `completeDecode`'s section, under the lock.
    private func _completeDecode(
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
            handler.finishDecoding(
                object: object, origin: job.origin, freshness: job.freshness,
                cost: handler.decoder.cost(of: object, byteCount: job.data.byteCount))
            if handler.policy.cacheInMemory {
                work.released += memoryCache.setValue(
                    CachedObject(object: object, freshness: job.freshness, cost: handler.objectCost),
                    forKey: job.key, cost: handler.objectCost
                ).map(\.object)
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
            state.failures.record(error, for: job.key, policy: handler.policy, now: configuration.failureClock())
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
        handler.revalidated(object: object, origin: origin, freshness: freshness)
        state.handlers[key] = handler
        state.loadingBuffer.remove(key)
        if handler.policy.cacheInMemory {
            work.released += memoryCache.setValue(
                CachedObject(object: object, freshness: freshness, cost: handler.objectCost), forKey: key,
                cost: handler.objectCost
            ).map(\.object)
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
