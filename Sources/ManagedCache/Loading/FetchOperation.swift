import Foundation

/// The bytes a fetch produced: in memory, in a file-cache entry, or both.
struct FetchedData: Sendable {
    let memory: Data?
    let entry: FileCacheEntry?
    let byteCount: Int
    let origin: DataOrigin
    let contentType: String?

    /// The bytes as a decoder wants them: a file when it prefers one and there is one, else memory.
    func loadedData(prefersFileURL: Bool) -> LoadedData {
        if let entry, prefersFileURL || memory == nil {
            return LoadedData(fileURL: entry.fileURL, byteCount: byteCount, origin: origin, contentType: contentType)
        }
        return LoadedData(data: memory ?? Data(), origin: origin, contentType: contentType)
    }
}

/// How a running fetch reports back to its manager without keeping it alive.
struct FetchCallbacks: Sendable {
    let progress: @Sendable (_ progress: LoadProgress, _ newBytes: Int) -> Void
    let requestSent: @Sendable () -> Void
    let event: @Sendable (ManagerEvent) -> Void
}

/// One fetch of one data key: the undecoded-data cache, then the file cache (verified), then the
/// loader, with retries, an idle timeout, a size limit and streaming into the file cache.
struct FetchOperation: Sendable {
    let dataKey: String
    let request: ObjectRequest
    let policy: LoadPolicy
    let loader: any DataLoading
    let fileCache: (any FileCaching)?
    let undecoded: MemoryCache<String, Data>
    /// Downloads up to this size are kept in memory as well as on disk, so decoding does not read them back.
    let inMemoryThreshold: Int
    let callbacks: FetchCallbacks

    func run() async -> Result<FetchedData, ManagedCacheError> {
        if let data = undecoded.value(forKey: dataKey) {
            return .success(FetchedData(memory: data, entry: nil, byteCount: data.count, origin: .undecodedData, contentType: nil))
        }
        if let cached = readFromFileCache() {
            return .success(cached)
        }
        var useFileCache = policy.cacheInFile && fileCache != nil
        var retries = 0
        while true {
            if Task.isCancelled { return .failure(.cancelled(.caller)) }
            do {
                return .success(try await download(useFileCache: useFileCache))
            } catch is FileCacheWriteLost {
                useFileCache = false  // the disk failed after the in-memory copy was dropped: go again without it
                continue
            } catch {
                let failure = ManagedCacheError.from(loaderError: error)
                guard failure.isTransient, retries < policy.retry.maximumRetries, !Task.isCancelled else {
                    return .failure(Task.isCancelled ? .cancelled(.caller) : failure)
                }
                retries += 1
                let delay = policy.retry.delay(beforeRetry: retries)
                try? await Task.sleep(for: .seconds(delay))
            }
        }
    }

    /// A verified file-cache hit, or `nil` (a corrupt entry is removed and reported).
    func readFromFileCache() -> FetchedData? {
        guard policy.cacheInFile, let fileCache, let entry = fileCache.entry(forKey: dataKey) else { return nil }
        do {
            if entry.byteCount <= inMemoryThreshold {
                let data = try fileCache.readData(for: entry)
                return FetchedData(memory: data, entry: entry, byteCount: data.count, origin: .fileCache,
                                   contentType: entry.metadata.contentType)
            }
            try fileCache.verify(entry)
            return FetchedData(memory: nil, entry: entry, byteCount: entry.byteCount, origin: .fileCache,
                               contentType: entry.metadata.contentType)
        } catch FileCacheError.corrupted {
            callbacks.event(.corruptEntryRemoved(key: dataKey))
        } catch {
            callbacks.event(.fileCacheFailure(key: dataKey, operation: "read", error: String(describing: error)))
        }
        return nil
    }

    private func download(useFileCache: Bool) async throws -> FetchedData {
        var writer: (any FileCacheWriter)?
        if useFileCache, let fileCache {
            do {
                writer = try fileCache.makeWriter(forKey: dataKey)
            } catch {
                callbacks.event(.fileCacheFailure(key: dataKey, operation: "create", error: String(describing: error)))
            }
        }
        let receiver = FetchReceiver(
            writer: writer, maximumBodySize: policy.maximumBodySize,
            inMemoryThreshold: writer == nil ? Int.max : inMemoryThreshold,
            callbacks: callbacks)
        let loadRequest = DataLoadRequest(url: request.url, headers: request.headers, timeout: policy.timeout)
        callbacks.requestSent()
        let response: DataLoadResponse
        do {
            response = try await withIdleTimeout(policy.timeout, activity: receiver) {
                try await loader.load(loadRequest, receiver: receiver)
            }
        } catch {
            receiver.abortWriter()
            if Task.isCancelled { throw ManagedCacheError.cancelled(.caller) }
            throw error
        }
        let result = receiver.finish()
        if result.lostData { throw FileCacheWriteLost() }
        var entry: FileCacheEntry?
        if let writer = result.writer {
            let metadata = FileCacheMetadata(
                etag: response.header("etag"), lastModified: response.header("last-modified"),
                contentType: response.header("content-type"))
            do {
                entry = try writer.commit(metadata: metadata)
            } catch {
                writer.abort()
                callbacks.event(.fileCacheFailure(key: dataKey, operation: "commit", error: String(describing: error)))
                if result.memory == nil { throw FileCacheWriteLost() }
            }
        }
        return FetchedData(memory: result.memory, entry: entry, byteCount: result.byteCount, origin: .network,
                           contentType: response.header("content-type"))
    }

    /// Runs `operation`, failing with `.timedOut` when `activity` reports nothing for `seconds`.
    private func withIdleTimeout(
        _ seconds: Double, activity: FetchReceiver,
        operation: @escaping @Sendable () async throws -> DataLoadResponse
    ) async throws -> DataLoadResponse {
        try await withThrowingTaskGroup(of: DataLoadResponse?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                while true {
                    let remaining = seconds - activity.secondsSinceLastActivity()
                    if remaining <= 0 { throw ManagedCacheError.timedOut(seconds: seconds) }
                    try await Task.sleep(for: .seconds(remaining))
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let response = result { return response }
            }
            throw ManagedCacheError.cancelled(.caller)
        }
    }
}

/// Thrown when the file cache failed after the in-memory copy was dropped: the bytes are lost
/// and the download must start over without the file cache.
struct FileCacheWriteLost: Error {}
