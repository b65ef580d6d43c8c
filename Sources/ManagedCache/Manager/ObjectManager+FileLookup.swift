import Foundation

extension ObjectManager {
    /// The file-cache key of a stored variant: the bytes' key plus the decoder's identifier, after
    /// a `\u{1E}`, which no data key contains (`ObjectRequest.dataKey` escapes it), so no request's
    /// bytes can be looked up under a variant's key.
    static func variantFileKey(_ key: ObjectKey) -> String {
        "\(key.dataKey)\u{1E}variant=\(key.variant)"
    }

    /// Looks for the handler's object in the file cache before any download: its stored variant
    /// first (for decoders that store one), then the original bytes when delivery is synchronous
    /// (an original over `maximumBytes` counts as a miss). A hit is decoded and delivered (to
    /// `synchronousUser` on this thread, when given); a miss starts the load.
    func loadFromFileCache(
        key: ObjectKey, generation: UInt64, policy: LoadPolicy, synchronousUser: ObjectIdentifier?, maximumBytes: Int?
    ) {
        let synchronously = synchronousUser != nil
        let lookup = state.withLock { state -> (AnyObjectDecoder, ObjectRequest)? in
            guard let handler = state.handlers[key], handler.generation == generation else { return nil }
            return (handler.decoder, handler.request)
        }
        guard let (decoder, request) = lookup else { return }
        var sources: [(fileKey: String, isVariant: Bool)] = []
        if decoder.storesVariant { sources.append((Self.variantFileKey(key), true)) }
        if synchronously { sources.append((key.dataKey, false)) }
        for source in sources {
            let operation = FetchOperation(
                dataKey: source.fileKey, request: request, policy: policy, loader: configuration.dataLoader,
                fileCache: fileCache, undecoded: undecodedData, inMemoryThreshold: configuration.inMemoryThreshold,
                callbacks: .eventsOnly { [weak self] in self?.report($0) })
            guard let fetched = operation.readFromFileCache(
                acceptingStale: source.isVariant, maximumBytes: source.isVariant ? nil : maximumBytes) else { continue }
            let data = fetched.loadedData(prefersFileURL: decoder.prefersFileURL)
            let loaded = source.isVariant
                ? LoadedData(data: (try? data.bytes()) ?? Data(), origin: .fileCache, contentType: data.contentType, isStoredVariant: true)
                : data
            let job = DecodeJob(key: key, generation: generation, decoder: decoder, data: loaded, origin: .fileCache,
                                freshness: fetched.freshness)
            let outcome = decoder.decode(loaded)
            if case .failure = outcome, source.isVariant {
                fileCache?.removeEntry(forKey: source.fileKey)  // a bad variant: fall back to the original
                continue
            }
            state.withLock { $0.statistics.fileCacheHits += 1 }
            completeDecode(job, outcome: outcome, synchronousUser: synchronousUser)
            // Delivered; now store the variant made from the original, never on the caller's
            // thread (which may be the main one): on the loading executor.
            if case .success(let object) = outcome, !source.isVariant, decoder.storesVariant {
                if synchronously {
                    Task(executorPreference: LoadingExecutor.shared) { [weak self] in
                        self?.storeVariantIfNeeded(job, object: object)
                    }
                } else {
                    storeVariantIfNeeded(job, object: object)
                }
            }
            return
        }
        let work = state.withLock { state -> PendingWork in
            guard let handler = state.handlers[key], handler.generation == generation, case .loaded = handler.phase
            else { return PendingWork() }
            return _startLoading(key, evictable: policy.participatesInLoadingBuffer, in: &state)
        }
        perform(work)
    }

    /// After decoding original bytes, stores the decoder's variant in the file cache (and drops the
    /// original if the decoder does not keep it).
    func storeVariantIfNeeded(_ job: DecodeJob, object: any Sendable) {
        guard job.decoder.storesVariant, !job.data.isStoredVariant, let fileCache else { return }
        let policy = state.withLock { $0.handlers[job.key]?.policy } ?? configuration.policy
        guard policy.cacheInFile, let bytes = job.decoder.encodedVariant(of: object) else { return }
        do {
            try fileCache.store(bytes, forKey: Self.variantFileKey(job.key), metadata: FileCacheMetadata())
            if !job.decoder.keepsOriginal { fileCache.removeEntry(forKey: job.key.dataKey) }
        } catch {
            report(.fileCacheFailure(key: job.key.dataKey, operation: "store variant", error: String(describing: error)))
        }
    }
}
