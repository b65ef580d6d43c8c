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

    /// Prefetches `requests` like ``prefetch(_:priority:)`` and returns, once every request has an
    /// outcome, what became of each: loaded, already cached, failed (with the typed error) or
    /// cancelled. For "download these for offline use and tell me when it is done".
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager).
    /// let articleImages = (0..<40).map { ObjectRequest(url: URL(string: "https://example.com/a/7/\($0).jpg")!) }
    /// let report = await manager.prefetchAndWait(articleImages) { progress in
    ///     print("\(progress.finished) of \(progress.total)")
    /// }
    /// if !report.isComplete { print("\(report.failures.count) failed; try again later") }
    /// ```
    ///
    /// Cancelling the calling task cancels these prefetches (``cancelPrefetching(_:)``: by key, so
    /// other prefetches of the same keys stop too) and returns the report with what finished
    /// before. Every other rule of ``prefetch(_:priority:)`` holds: a prefetch slot, no
    /// loading-buffer slot, a user asking for a key being prefetched joins its load.
    ///
    /// - Parameters:
    ///   - requests: What to load. A request the data loader cannot load fails with
    ///     ``ManagedCacheError/invalidRequest(reason:)``.
    ///   - priority: The prefetches' priority (default `.low`).
    ///   - progress: Called after each outcome with the counts so far, on a queue of the
    ///     prefetch's own, in order. Default `nil`.
    /// - Returns: One result per request, in the order given, and the counts.
    public func prefetchAndWait(
        _ requests: [ObjectRequest], priority: LoadPriority = .low, progress: (@Sendable (PrefetchProgress) -> Void)? = nil
    ) async -> PrefetchReport {
        await awaitReport(requests, decoder: nil, priority: priority, progress: progress)
    }

    /// Prefetches and decodes `requests` into the memory cache with `decoder`, like
    /// ``prefetch(_:decoder:priority:)``, and returns what became of each once all have an outcome
    /// (see ``prefetchAndWait(_:priority:progress:)``).
    ///
    /// - Parameters:
    ///   - requests: What to load.
    ///   - decoder: The decoder whose objects users will ask for (the same `identifier`).
    ///   - priority: The prefetches' priority (default `.low`).
    ///   - progress: Called after each outcome with the counts so far. Default `nil`.
    /// - Returns: One result per request, in the order given, and the counts.
    public func prefetchAndWait<Decoder: ObjectDecoding>(
        _ requests: [ObjectRequest], decoder: Decoder, priority: LoadPriority = .low,
        progress: (@Sendable (PrefetchProgress) -> Void)? = nil
    ) async -> PrefetchReport {
        await awaitReport(requests, decoder: AnyObjectDecoder(decoder), priority: priority, progress: progress)
    }

    /// Prefetches `requests` like ``prefetch(_:priority:)`` and calls `completion` with what became
    /// of each once every request has an outcome: the callback form of
    /// ``prefetchAndWait(_:priority:progress:)``.
    ///
    /// - Parameters:
    ///   - requests: What to load.
    ///   - priority: The prefetches' priority (default `.low`).
    ///   - progress: Called after each outcome with the counts so far. Default `nil`.
    ///   - completion: Called once with the report, on a queue of the prefetch's own (after the
    ///     last `progress`).
    public func prefetch(
        _ requests: [ObjectRequest], priority: LoadPriority = .low, progress: (@Sendable (PrefetchProgress) -> Void)? = nil,
        completion: @escaping @Sendable (PrefetchReport) -> Void
    ) {
        enqueuePrefetches(
            requests, decoder: nil, priority: priority,
            batch: makeBatch(requests, progress: progress, completion: completion))
    }

    /// Prefetches and decodes `requests` with `decoder` like ``prefetch(_:decoder:priority:)`` and
    /// calls `completion` with what became of each once every request has an outcome.
    ///
    /// - Parameters:
    ///   - requests: What to load.
    ///   - decoder: The decoder whose objects users will ask for.
    ///   - priority: The prefetches' priority (default `.low`).
    ///   - progress: Called after each outcome with the counts so far. Default `nil`.
    ///   - completion: Called once with the report, on a queue of the prefetch's own.
    public func prefetch<Decoder: ObjectDecoding>(
        _ requests: [ObjectRequest], decoder: Decoder, priority: LoadPriority = .low,
        progress: (@Sendable (PrefetchProgress) -> Void)? = nil, completion: @escaping @Sendable (PrefetchReport) -> Void
    ) {
        enqueuePrefetches(
            requests, decoder: AnyObjectDecoder(decoder), priority: priority,
            batch: makeBatch(requests, progress: progress, completion: completion))
    }

    /// A batch whose cached requests are pinned when their policy asks (bytes a load found
    /// cached are not written again, so the fetch's writer could not pin them), and whose
    /// outcome says so when the pin cannot be made.
    private func makeBatch(
        _ requests: [ObjectRequest], progress: (@Sendable (PrefetchProgress) -> Void)?,
        completion: @escaping @Sendable (PrefetchReport) -> Void
    ) -> PrefetchBatch {
        PrefetchBatch(
            requests: requests,
            pinIfAsked: { [weak fileCacheReader] in fileCacheReader?.pinIfPolicyAsks($0, missingBytesFail: true) }, progress: progress,
            completion: completion)
    }

    private func awaitReport(
        _ requests: [ObjectRequest], decoder: AnyObjectDecoder?, priority: LoadPriority,
        progress: (@Sendable (PrefetchProgress) -> Void)?
    ) async -> PrefetchReport {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PrefetchReport, Never>) in
                enqueuePrefetches(
                    requests, decoder: decoder, priority: priority,
                    batch: makeBatch(requests, progress: progress) { continuation.resume(returning: $0) })
            }
        } onCancel: {
            // Off the cancellation handler, which holds the task's status lock: cancelling calls
            // back users whose loads end with it.
            EngineThreads.workers.async { self.cancelPrefetching(requests) }
        }
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
        let work = decide(.prefetchCancelled(matching: { dataKeys.contains($0) })).work
        performer.perform(work)
    }

    /// Drops the prefetches not started yet and stops those running that no user waits for.
    public func cancelPrefetching() {
        let work = decide(.prefetchCancelled(matching: { _ in true })).work
        performer.perform(work)
    }

    /// The number of prefetches not finished yet: waiting for a slot, loading, or decoding. 0 once
    /// every prefetch has ended (loaded, failed or cancelled). A request prefetched again while
    /// it waits or runs counts once.
    public var pendingPrefetchCount: Int {
        state.withLock { state in
            state.prefetchQueue.count + state.fetches.values.count { $0.prefetchHolds > 0 }
                + state.handlers.values.count { $0.heldByPrefetch && $0.phase.isBusy }
        }
    }

    /// The number of prefetches waiting for a slot (not started yet).
    package var queuedPrefetchCount: Int { state.withLock { $0.prefetchQueue.count } }

    private func enqueuePrefetches(
        _ requests: [ObjectRequest], decoder: AnyObjectDecoder?, priority: LoadPriority, batch: PrefetchBatch? = nil
    ) {
        // A prefetch that pins is followed like a reporting one, without a report: bytes found
        // already cached are pinned once its outcome is known.
        let batch =
            batch
            ?? (requests.contains { $0.policy(over: configuration.policy).pinsInFileCache }
                ? makeBatch(requests, progress: nil, completion: { _ in }) : nil)
        // Asked before the lock: the loader is the app's code, which no section calls.
        let unloadable = requests.map { request -> String? in
            if request.dataKey.isEmpty { return "empty key" }
            return configuration.dataLoader.canLoad(request.url) ? nil : "unsupported URL '\(request.url.absoluteString)'"
        }
        let work = decide(.prefetch(requests, unloadable: unloadable, decoder, priority, batch)).work
        performer.perform(work)
    }

}
