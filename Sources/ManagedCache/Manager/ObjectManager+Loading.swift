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
        let (dataKey, identifier, previews) = (plan.dataKey, plan.fetch, plan.previews)
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

    private func fetchProgressed(dataKey: String, fetch identifier: UInt64, progress: LoadProgress, newBytes: Int) {
        transferCounters.withLock { $0.bytesDownloaded += newBytes }
        performer.perform(decide(.fetchProgressed(dataKey: dataKey, fetch: identifier, progress)).work)
    }

    /// Records the end of a fetch and returns the decodes it enables, to run on the fetch's task.
    func completeFetch(dataKey: String, fetch identifier: UInt64, result: Result<FetchedData, ManagedCacheError>) -> [DecodeJob] {
        let now = Date()  // for stale-if-error, read before the lock
        let decision = decide(.fetchFinished(dataKey: dataKey, fetch: identifier, result, now: now))
        performer.perform(decision.work)
        return decision.decodes
    }

}
