import Foundation

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
