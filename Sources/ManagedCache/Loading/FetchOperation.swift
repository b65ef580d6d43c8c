import Foundation

/// The bytes a fetch produced: in memory, in a file-cache entry, or both, or in a temporary file
/// (no file cache, a large body); or a confirmation that stale bytes are still current (`notModified`).
struct FetchedData: Sendable {
    private let storedMemory: Data?
    let entry: FileCacheEntry?
    /// The body in a temporary file (a download without a file cache, past the in-memory threshold).
    let spool: DownloadSpool?
    let byteCount: Int
    let origin: DataOrigin
    let contentType: String?
    /// How long the bytes are fresh, from the response (or the file-cache entry).
    let freshness: HTTPFreshness?
    /// A `304 Not Modified` answered a conditional request: stale objects stay valid.
    var notModified = false
    /// Set when these bytes are a stale file-cache entry delivered because revalidating it
    /// failed (stale-if-error, `StaleIfError`): the failure. `nil` for bytes that are fresh,
    /// new or just confirmed by a `304`.
    var staleAfterFailure: ManagedCacheError?

    /// Set when these bytes are a stale file-cache entry served at once under
    /// stale-while-revalidate with nothing of the key in memory (a cold start): the manager
    /// revalidates them in the background once their object is delivered.
    var servedWhileRevalidating = false

    /// Whether the bytes are past their freshness and unconfirmed: the object made from them may be
    /// out of date, and the next load (or the background revalidation) revalidates it.
    var isStale: Bool { staleAfterFailure != nil || servedWhileRevalidating }

    init(
        memory: Data?, entry: FileCacheEntry?, spool: DownloadSpool? = nil, byteCount: Int, origin: DataOrigin,
        contentType: String?, freshness: HTTPFreshness?
    ) {
        self.storedMemory = memory
        self.entry = entry
        self.spool = spool
        self.byteCount = byteCount
        self.origin = origin
        self.contentType = contentType
        self.freshness = freshness
    }

    /// The bytes in memory, or mapped from the temporary file.
    var memory: Data? { storedMemory ?? spool?.mappedData }

    /// Whether there are bytes a decoder can use.
    var hasBytes: Bool { storedMemory != nil || entry != nil || spool != nil }

    /// The bytes as a decoder wants them: a file when it prefers one and there is one, else memory
    /// (mapped from the temporary file when the body is in one).
    func loadedData(prefersFileURL: Bool) -> LoadedData {
        if let entry, prefersFileURL || storedMemory == nil {
            return LoadedData(fileURL: entry.fileURL, byteCount: byteCount, origin: origin, contentType: contentType)
        }
        if let spool, storedMemory == nil {
            if !prefersFileURL, let mapped = spool.mappedData {
                return LoadedData(data: mapped, origin: origin, contentType: contentType)
            }
            return LoadedData(temporaryFile: spool, byteCount: byteCount, origin: origin, contentType: contentType)
        }
        return LoadedData(data: storedMemory ?? Data(), origin: origin, contentType: contentType)
    }
}

/// How a running fetch reports back to its manager without keeping it alive.
struct FetchCallbacks: Sendable {
    let progress: @Sendable (_ progress: LoadProgress, _ newBytes: Int) -> Void
    let requestSent: @Sendable (_ conditional: Bool) -> Void
    let event: @Sendable (ManagerEvent) -> Void
    /// Each chunk of the body and where it starts in the body (for previews); after `progress`.
    var bytes: (@Sendable (_ chunk: Data, _ offset: Int) -> Void)?

    static func eventsOnly(_ event: @escaping @Sendable (ManagerEvent) -> Void) -> FetchCallbacks {
        FetchCallbacks(progress: { _, _ in }, requestSent: { _ in }, event: event)
    }
}

/// One fetch of one data key: the undecoded-data cache, then the file cache (verified; revalidated
/// with a conditional request when stale), then the loader, with retries, an idle timeout, a size
/// limit and streaming into the file cache.
struct FetchOperation: Sendable {
    let dataKey: String
    let request: ObjectRequest
    let policy: LoadPolicy
    let loader: any DataLoading
    let fileCache: (any FileCaching)?
    let undecoded: MemoryCache<String, Data>
    /// Downloads up to this size are kept in memory as well as on disk, so decoding does not read them back.
    let inMemoryThreshold: Int
    /// Validators of a stale object in memory, for a conditional request when the file cache has none.
    var memoryValidators: HTTPFreshness?
    /// The fetch's priority, changed by the manager while it runs.
    let priority: LoadPriorityCell
    let callbacks: FetchCallbacks
    /// Guards the commit of the downloaded bytes (and a `304`'s metadata update): an object the
    /// app stores over the data key (`ObjectManager.store`) closes it. `nil`: nothing can supersede this fetch.
    var writeGate: WriteGate?
    /// Paces the requests sent to the loader (`LoadRateLimit`); `nil`: they go at once.
    var rateLimiter: LoadRateLimiter?
    /// Whether a stale file entry may be served at once under stale-while-revalidate (see
    /// `servesStaleAtOnce`): for loads users wait for; a prefetch refreshes the entry instead.
    var mayServeStaleAtOnce = false

    /// What a conditional request revalidates.
    private enum StaleBase {
        case fileEntry(FileCacheEntry)
        case memoryObject(HTTPFreshness)

        var freshness: HTTPFreshness {
            switch self {
            case .fileEntry(let entry): return entry.metadata.freshness
            case .memoryObject(let freshness): return freshness
            }
        }
    }

    func run() async -> Result<FetchedData, ManagedCacheError> {
        LoadAccounting.fetches.withLock { $0 += 1 }
        defer { LoadAccounting.fetches.withLock { $0 -= 1 } }
        if let data = undecoded.value(forKey: dataKey) {
            return .success(
                FetchedData(
                    memory: data, entry: nil, byteCount: data.count, origin: .undecodedData,
                    contentType: nil, freshness: nil))
        }
        var stale: StaleBase?
        if policy.cacheInFile, let entry = fileCache?.entry(forKey: dataKey) {
            if isServableWithoutRevalidation(entry) {
                if let cached = read(entry) { return .success(cached) }
            } else if servesStaleAtOnce(entry), var cached = read(entry) {
                cached.servedWhileRevalidating = true
                return .success(cached)
            } else {
                stale = .fileEntry(entry)
            }
        } else if let memoryValidators, memoryValidators.hasValidators {
            stale = .memoryObject(memoryValidators)
        }
        var useFileCache = policy.cacheInFile && fileCache != nil
        var spools = true
        var retries = 0
        while true {
            if Task.isCancelled { return .failure(.cancelled(.caller)) }
            do {
                return .success(try await download(useFileCache: useFileCache, spools: spools && !useFileCache, stale: stale))
            } catch is FileCacheWriteLost {
                useFileCache = false  // the disk failed after the in-memory copy was dropped: go again without it
                continue
            } catch is DownloadSpoolLost {
                spools = false  // the temporary file failed: go again in memory
                continue
            } catch is PartialDownloadRejected {
                fileCache?.discardPartialDownload(forKey: dataKey)  // the server cannot continue it: start over
                continue
            } catch {
                var failure = ManagedCacheError.from(loaderError: error)
                // URLSession's own backstop timeout reports no duration: every idle timeout is the policy's.
                if case .timedOut = failure { failure = .timedOut(seconds: policy.timeout) }
                if !Task.isCancelled, let fallback = staleFallback(stale, after: failure) {
                    return fallback
                }
                guard failure.isTransient, retries < policy.retry.maximumRetries, !Task.isCancelled else {
                    return .failure(Task.isCancelled ? .cancelled(.caller) : failure)
                }
                retries += 1
                // On the engine's timer thread (see `DeadlineTimer.sleep(seconds:)`); a cancelled
                // load stops waiting at once, as with `Task.sleep`.
                await DeadlineTimer.shared.sleep(seconds: max(0, policy.retry.delay(beforeRetry: retries)))
            }
        }
    }

    /// Stale-if-error: what a failed revalidation of `stale` delivers, when `StaleIfError` allows
    /// the stale copy; `nil` goes on as for any failure (retry or fail).
    ///
    /// It is decided at the first failed attempt, without the retries: a user with a copy to show
    /// should see it as soon as the network fails (a refused connection fails at once; retrying a
    /// stalled server would keep the screen empty for an idle timeout per attempt), and the next
    /// load revalidates again. A stale file-cache entry is read and returned, marked stale. A
    /// stale object in memory is the manager's: the failure is returned at once, for the manager
    /// to deliver that object under the same decision.
    private func staleFallback(_ stale: StaleBase?, after failure: ManagedCacheError) -> Result<FetchedData, ManagedCacheError>? {
        guard let stale,
            StaleIfError.decide(freshness: stale.freshness, failure: failure, now: Date(), policy: policy) == .deliverStale
        else { return nil }
        switch stale {
        case .fileEntry(let entry):
            guard var cached = read(entry) else { return nil }  // unreadable or corrupt: go on as for any failure
            cached.staleAfterFailure = failure
            return .success(cached)
        case .memoryObject:
            return .failure(failure)
        }
    }

    /// Whether the stale `entry` is served at once, its revalidation left to the manager:
    /// under stale-while-revalidate, unless the response said `must-revalidate`, and only when no
    /// stale object of the key is in memory (`memoryValidators`): then the users have that one
    /// already, and this fetch is the revalidation.
    private func servesStaleAtOnce(_ entry: FileCacheEntry) -> Bool {
        mayServeStaleAtOnce && policy.staleWhileRevalidate && memoryValidators == nil
            && !entry.metadata.freshness.mustRevalidate
    }

    /// Whether `entry` may be served as it is: fresh, or not from HTTP (nothing to revalidate with).
    private func isServableWithoutRevalidation(_ entry: FileCacheEntry) -> Bool {
        !isHTTP || !entry.metadata.freshness.isStale(policy: policy.freshness)
    }

    private var isHTTP: Bool {
        let scheme = request.url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    /// A verified file-cache hit, or `nil` (a corrupt entry is removed and reported).
    /// A stale HTTP entry is not a hit here unless `acceptingStale` (stored variants, which are
    /// made here and carry no HTTP freshness): the load that follows revalidates it, as `run()` does.
    /// Neither is an entry larger than `maximumBytes`: the load that follows reads it.
    func readFromFileCache(acceptingStale: Bool, maximumBytes: Int?) -> FetchedData? {
        guard case .hit(let fetched) = readFromFileCache(acceptingStale: acceptingStale, maximumBytes: maximumBytes, within: nil)
        else { return nil }
        return fetched
    }

    /// The time budget of a read on the caller's thread: when the read started and how long it
    /// may take (`Configuration.synchronousFileReadTimeBudget`, `.infinity` for no limit); and how
    /// long one wait for the file cache's own lock may last at most
    /// (`Configuration.manageLockWaitBudget`; see `FileCaching.entry(forKey:waitingAtMost:)`).
    struct ReadBudget {
        let start: MonotonicInstant
        let time: Double
        let lockWait: Double

        /// Seconds left (infinite for an infinite budget; 0 or less once it is spent).
        var remaining: Double { time - MonotonicInstant.now.seconds(since: start) }

        /// How long the next wait for the store's lock may last.
        var nextWait: Double { min(lockWait, max(0, remaining)) }
    }

    /// What a read of the file cache with a time budget found.
    enum BoundedRead {
        case hit(FetchedData)
        case miss
        /// The cache's lock stayed held for the whole budget: the read was not made.
        case busy
    }

    /// `readFromFileCache(acceptingStale:maximumBytes:)`; `within` a budget (a time and a lock
    /// wait), each wait for the file cache's own lock ends by the time's end, and `.busy` says the
    /// lock stayed held or the lookup alone spent the time (a synchronous read inside `manage`,
    /// which must not hold the calling thread).
    func readFromFileCache(acceptingStale: Bool, maximumBytes: Int?, within budget: ReadBudget?)
        -> BoundedRead
    {
        guard policy.cacheInFile, let fileCache else { return .miss }
        let found: FileCacheEntry?
        if let budget {
            guard case .answered(let answer) = fileCache.entry(forKey: dataKey, waitingAtMost: budget.nextWait)
            else { return .busy }
            found = answer
            // Out of time already (a preempted lookup): the read is left to the load too.
            if found != nil, budget.remaining <= 0 { return .busy }
        } else {
            found = fileCache.entry(forKey: dataKey)
        }
        guard let entry = found else { return .miss }
        if let maximumBytes, entry.byteCount > maximumBytes { return .miss }
        if !acceptingStale, !isServableWithoutRevalidation(entry) { return .miss }
        return readEntry(entry, origin: .fileCache, freshness: nil, within: budget)
    }

    private func read(_ entry: FileCacheEntry, origin: DataOrigin = .fileCache, freshness: HTTPFreshness? = nil) -> FetchedData? {
        guard case .hit(let fetched) = readEntry(entry, origin: origin, freshness: freshness, within: nil) else { return nil }
        return fetched
    }

    /// Reads `entry` (within `budget`, when given).
    private func readEntry(
        _ entry: FileCacheEntry, origin: DataOrigin, freshness: HTTPFreshness?, within budget: ReadBudget?
    ) -> BoundedRead {
        guard let fileCache else { return .miss }
        let freshness = freshness ?? entry.metadata.freshness
        do {
            if entry.byteCount <= inMemoryThreshold {
                let bytes: BoundedFileCacheAnswer<Data> =
                    if let budget {
                        try fileCache.readData(for: entry, waitingAtMost: budget.nextWait)
                    } else {
                        .answered(try fileCache.readData(for: entry))
                    }
                guard case .answered(let data) = bytes else { return .busy }
                return .hit(
                    FetchedData(
                        memory: data, entry: entry, byteCount: data.count, origin: origin,
                        contentType: entry.metadata.contentType, freshness: freshness))
            }
            try fileCache.verify(entry)
            return .hit(
                FetchedData(
                    memory: nil, entry: entry, byteCount: entry.byteCount, origin: origin,
                    contentType: entry.metadata.contentType, freshness: freshness))
        } catch FileCacheError.corrupted {
            callbacks.event(.corruptEntryRemoved(key: dataKey))
        } catch {
            callbacks.event(.fileCacheFailure(key: dataKey, operation: .read, error: FileCacheError(error)))
        }
        return .miss
    }

    /// One download attempt. `spools`: without a file cache, a body past the in-memory threshold
    /// goes to a temporary file (`DownloadSpool`).
    private func download(useFileCache: Bool, spools: Bool, stale: StaleBase?) async throws -> FetchedData {
        // Before anything is prepared: a load cancelled while it waits for its turn (pushed out of
        // the loading buffer by a fast scroll) never reaches the loader and holds nothing.
        try await rateLimiter?.admit { [priority] in priority.value }
        var headers = request.headers
        let conditional = stale?.freshness.hasValidators == true
        if let stale, conditional {
            headers.merge(stale.freshness.conditionalHeaders) { _, conditional in conditional }
        }
        var writer: (any FileCacheWriter)?
        var resuming: PartialDownload?
        if useFileCache, policy.resumesDownloads, stale == nil, let fileCache,
            let partial = fileCache.partialDownload(forKey: dataKey)
        {
            do {
                writer = try fileCache.makeWriter(resuming: partial, pinned: policy.pinsInFileCache)
                resuming = partial
                headers["Range"] = "bytes=\(partial.byteCount)-"
                headers["If-Range"] = partial.validator
            } catch {
                fileCache.discardPartialDownload(forKey: dataKey)
            }
        }
        let makeWriter: @Sendable () -> (any FileCacheWriter)? = { [fileCache, dataKey, callbacks, policy] in
            do {
                // Pinned with the commit when the policy says so (a cache that cannot pin throws:
                // reported below, and the load goes on without the file cache).
                return try fileCache?.makeWriter(forKey: dataKey, pinned: policy.pinsInFileCache)
            } catch {
                callbacks.event(.fileCacheFailure(key: dataKey, operation: .create, error: FileCacheError(error)))
                return nil
            }
        }
        // A fresh download opens its file when a 2xx response head arrives, not before: a request
        // waiting for a connection, refused, or answered `304` holds no descriptor, so the files
        // open in `loading/` are bounded by the connections receiving bodies (see README,
        // "Descriptors"). A resumed download holds its kept bytes from the start.
        let receiver = FetchReceiver(
            dataKey: dataKey, writer: writer, maximumBodySize: policy.maximumBodySize,
            inMemoryThreshold: inMemoryThreshold, acceptsNotModified: conditional, resuming: resuming,
            freshWriter: makeWriter, opensWriterOnResponse: useFileCache && writer == nil, spoolsLargeBodies: spools,
            callbacks: callbacks)
        var loadRequest = DataLoadRequest(
            url: request.url, headers: headers, timeout: policy.timeout,
            priority: priority.value)
        loadRequest.priorityCell = priority
        if Task.isCancelled {
            // Cancelled while preparing (reading back kept bytes takes a while): send nothing.
            receiver.suspendOrAbortWriter(resumable: policy.resumesDownloads)
            throw ManagedCacheError.cancelled(.caller)
        }
        callbacks.requestSent(conditional)
        let response: DataLoadResponse
        // The transfer runs in a task of its own, so the idle watchdog can stop it without
        // cancelling this fetch (which may retry after a timeout).
        let transfer = LoadingTask.start { [loader] in
            // The idle timeout counts from here, not while this task waited to be scheduled.
            receiver.requestDidStart()
            return try await loader.load(loadRequest, receiver: receiver)
        }
        let watch = IdleWatchdog.shared.watch(receiver, timeout: policy.timeout) { transfer.cancel() }
        defer { IdleWatchdog.shared.unwatch(watch) }
        do {
            response = try await withTaskCancellationHandler {
                try await transfer.value
            } onCancel: {
                receiver.cancel()  // closes the writer's descriptor now
                transfer.cancel()
            }
        } catch {
            if receiver.didTimeOut {
                receiver.suspendOrAbortWriter(resumable: policy.resumesDownloads)
                throw ManagedCacheError.timedOut(seconds: policy.timeout)
            }
            // Interrupted (cancelled, timed out, connection lost): keep the bytes to resume later.
            // Refused (a status, the size limit): discard them.
            let interrupted =
                Task.isCancelled || ManagedCacheError.from(loaderError: error).isTransient
                || ManagedCacheError.from(loaderError: error) == .cancelled(.caller)
            let refused: Bool
            if case .httpStatus? = error as? ManagedCacheError { refused = true } else { refused = false }
            receiver.suspendOrAbortWriter(resumable: policy.resumesDownloads && interrupted && !refused)
            if Task.isCancelled { throw ManagedCacheError.cancelled(.caller) }
            throw error
        }
        if Task.isCancelled {
            // Cancelled as the body completed: the writer no longer has its descriptor.
            receiver.abortWriter()
            throw ManagedCacheError.cancelled(.caller)
        }
        let result = receiver.finish()
        let receivedAt = Date()
        if result.notModified, let stale {
            receiver.abortWriter()
            return try refreshed(stale, response: response, receivedAt: receivedAt)
        }
        if result.lostData { throw FileCacheWriteLost() }
        let freshness = HTTPFreshness(response: response, receivedAt: receivedAt, policy: policy.freshness)
        let directives = HTTPCacheDirectives(headers: response.headers)
        var entry: FileCacheEntry?
        if let writer = result.writer {
            if directives.noStore {
                writer.abort()  // `no-store`: never written to disk
                fileCache?.removeEntry(forKey: dataKey)
            } else if let writeGate, !writeGate.begin() {
                // The app stored an object over these bytes' key (`ObjectManager.store`): they must not land over it.
                writer.abort()
                if result.memory == nil { throw FileCacheWriteLost() }
            } else {
                defer { writeGate?.end() }
                let metadata = FileCacheMetadata(contentType: response.header("content-type")).with(freshness)
                do {
                    entry = try writer.commit(metadata: metadata)
                } catch {
                    writer.abort()
                    callbacks.event(.fileCacheFailure(key: dataKey, operation: .commit, error: FileCacheError(error)))
                    if result.memory == nil { throw FileCacheWriteLost() }
                }
            }
        }
        return FetchedData(
            memory: result.memory, entry: entry, spool: result.spool, byteCount: result.byteCount, origin: .network,
            contentType: response.header("content-type"), freshness: freshness)
    }

    /// A `304` answered: the stale bytes are current again, with new freshness.
    private func refreshed(_ stale: StaleBase, response: DataLoadResponse, receivedAt: Date) throws -> FetchedData {
        let freshness = HTTPFreshness(
            response: response, receivedAt: receivedAt, policy: policy.freshness,
            previous: stale.freshness)
        switch stale {
        case .fileEntry(let entry):
            // Not over an object the app stored meanwhile: its entry is not the one revalidated.
            WriteGate.write(through: writeGate) {
                do {
                    try fileCache?.updateMetadata(entry.metadata.with(freshness), forKey: dataKey)
                } catch {
                    callbacks.event(.fileCacheFailure(key: dataKey, operation: .updateMetadata, error: FileCacheError(error)))
                }
            }
            guard var cached = read(entry, origin: .revalidated, freshness: freshness) else {
                throw ManagedCacheError.transport(code: -1, description: "the revalidated file-cache entry is gone")
            }
            cached.notModified = true
            return cached
        case .memoryObject:
            var confirmed = FetchedData(
                memory: nil, entry: nil, byteCount: 0, origin: .revalidated, contentType: nil,
                freshness: freshness)
            confirmed.notModified = true
            return confirmed
        }
    }
}

/// Thrown when the file cache failed after the in-memory copy was dropped: the bytes are lost
/// and the download must start over without the file cache.
struct FileCacheWriteLost: Error {}
