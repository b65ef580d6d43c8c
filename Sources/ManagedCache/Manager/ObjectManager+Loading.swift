import Foundation

extension ObjectManager {
    // MARK: - Running fetches

    /// The download of a fetch, made in its task (`FetchRunner`).
    func makeFetchOperation(_ plan: FetchPlan) -> FetchOperation {
        var operation = FetchOperation(
            dataKey: plan.dataKey, request: plan.request, policy: plan.policy, loader: configuration.dataLoader,
            fileCache: fileCache, undecoded: undecodedData, inMemoryThreshold: configuration.inMemoryThreshold,
            memoryValidators: plan.validators, priority: plan.priority,
            callbacks: makeFetchCallbacks(plan), writeGate: plan.writeGate,
            rateLimiter: plan.paced ? loadRateLimiter : nil)
        operation.mayServeStaleAtOnce = plan.forUsers
        return operation
    }

    /// Decodes bytes a fetch brought for one handler, in the fetch's task: delivers first (the
    /// users are waiting), then stores the variant. A file-cache entry removed by another instance
    /// between the read and the decode is a miss: the key loads again.
    func decodeFetched(_ job: DecodeJob) {
        let outcome = job.decoder.decode(job.data)
        if case .failure = outcome, job.origin == .fileCache, job.data.fileCacheEntryVanished {
            fileCache?.removeEntry(forKey: job.key.dataKey)
            performer.loadAfterUnusableFileCacheEntry(job)
            return
        }
        performer.completeDecode(job, outcome: outcome)
        if case .success(let object) = outcome { fileCacheReader.storeVariantIfNeeded(job, object: object) }
    }

    // MARK: - Fetch callbacks (from the fetch's task)

    private func makeFetchCallbacks(_ plan: FetchPlan) -> FetchCallbacks {
        let (dataKey, identifier, previews, audience) = (plan.dataKey, plan.fetch, plan.previews, plan.audience)
        return FetchCallbacks(
            progress: { [weak self] progress, newBytes in
                self?.fetchProgressed(dataKey: dataKey, fetch: identifier, audience: audience, progress: progress, newBytes: newBytes)
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
                self?.previewBytesArrived(chunk, offset: offset, feed: previews, audience: audience)
            })
    }

    /// Tells the fetch's users of `progress` from its audience, without the manager's lock; asks
    /// the manager only when a user of a load that may be cancelled without users was released.
    private func fetchProgressed(
        dataKey: String, fetch identifier: UInt64, audience: FetchAudience, progress: LoadProgress, newBytes: Int
    ) {
        transferCounters.withLock { $0.bytesDownloaded += newBytes }
        let (deliveries, usersReleased) = audience.progressed(progress)
        if !deliveries.isEmpty {
            var work = PendingWork()
            work.deliveries = deliveries
            performer.perform(work)
        }
        if usersReleased { performer.perform(decide(.fetchUsersReleased(dataKey: dataKey, fetch: identifier)).work) }
    }

    /// Ends a fetch, on its task: decodes its bytes for each handler subscribed to it, then
    /// records the end and the objects in one section, and delivers them. Returns what is left
    /// to do on the task: decodes for handlers that joined meanwhile (or whose bytes it could
    /// not decode before: a file-cache entry that vanished), and the variants to store.
    func finishFetch(_ plan: FetchPlan, result: Result<FetchedData, ManagedCacheError>) -> LoadCore.FetchEnd {
        var decoded: [ObjectKey: Result<any Sendable, ManagedCacheError>] = [:]
        // Bytes every subscriber decodes: not a `304` (a stale object may be confirmed instead),
        // nor a stale copy shown after a failure (the object in memory may be shown instead).
        if case .success(let fetched) = result, fetched.hasBytes, !fetched.notModified, fetched.staleAfterFailure == nil {
            for (key, decoder) in plan.audience.subscribers {
                let data = fetched.loadedData(prefersFileURL: decoder.prefersFileURL)
                let outcome = decoder.decode(data)
                // An entry removed by another instance since the read: the decode job's path loads again.
                if case .failure = outcome, fetched.origin == .fileCache, data.fileCacheEntryVanished { continue }
                decoded[key] = outcome
            }
        }
        let now = Date()  // for stale-if-error, read before the lock
        let decision = decide(.fetchFinished(dataKey: plan.dataKey, fetch: plan.fetch, result, decoded: decoded, now: now))
        performer.perform(decision.work)
        return decision.fetchEnd
    }

}
