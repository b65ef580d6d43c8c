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
    /// `synchronousUser` on this thread, when given); a miss starts the load. On the caller's
    /// thread, so does a file cache whose lock stays held past the time budget
    /// (`Configuration.synchronousFileReadTimeBudget`): the load reads the cache in the background.
    ///
    /// On the caller's thread, right after the lock that decided the lookup, the handler is not
    /// checked again: what the lookup finds is delivered, or the load started, only if the handler
    /// is still in that lookup (its generation). On the loading executor, after a thread hop, it
    /// is checked first, so a lookup whose user has gone reads nothing.
    func loadFromFileCache(key: ObjectKey, lookup: FileLookup, synchronousUser: ObjectIdentifier?, maximumBytes: Int?) {
        let synchronously = synchronousUser != nil
        let (generation, policy, decoder, request, writeGate) = (
            lookup.generation, lookup.policy, lookup.decoder, lookup.request, lookup.writeGate
        )
        if !synchronously {
            let current = state.withLock { state in state.handlers[key]?.generation == generation }
            guard current else { return }
        }
        var sources: [(fileKey: String, isVariant: Bool)] = []
        if decoder.storesVariant { sources.append((Self.variantFileKey(key), true)) }
        if synchronously { sources.append((key.dataKey, false)) }
        var outOfBudget = false
        for source in sources {
            let operation = FetchOperation(
                dataKey: source.fileKey, request: request, policy: policy, loader: configuration.dataLoader,
                fileCache: fileCache, undecoded: undecodedData, inMemoryThreshold: configuration.inMemoryThreshold,
                priority: LoadPriorityCell(request.priority), callbacks: .eventsOnly { [weak self] in self?.report($0) })
            let readStart = MonotonicInstant.now
            // On the caller's thread each wait for the file cache's lock (a `FileCache` or
            // `BigFileCache`) lasts at most `manageLockWaitBudget`, and ends by the time budget:
            // past it the lookup is left to the load, which reads the cache first, in the background.
            let budget =
                synchronously
                ? fileCacheStore.map {
                    FetchOperation.ReadBudget(
                        store: $0, start: readStart, time: configuration.synchronousFileReadTimeBudget,
                        lockWait: configuration.manageLockWaitBudget)
                }
                : nil
            let read = operation.readFromFileCache(
                acceptingStale: source.isVariant, maximumBytes: synchronously || !source.isVariant ? maximumBytes : nil,
                within: budget)
            guard case .hit(let fetched) = read else {
                if case .busy = read {
                    outOfBudget = true
                    break
                }
                continue
            }
            let data = fetched.loadedData(prefersFileURL: decoder.prefersFileURL)
            let loaded =
                source.isVariant
                ? LoadedData(data: (try? data.bytes()) ?? Data(), origin: .fileCache, contentType: data.contentType, isStoredVariant: true)
                : data
            let job = DecodeJob(
                key: key, generation: generation, decoder: decoder, data: loaded, origin: .fileCache,
                freshness: fetched.freshness, writeGate: writeGate)
            if synchronously, MonotonicInstant.now.seconds(since: readStart) > configuration.synchronousFileReadTimeBudget {
                // The read alone used the caller's budget: decode and deliver in the background.
                LoadingTask.start { [weak self] in
                    self?.decodeFileCacheHit(job, fileKey: source.fileKey, isVariant: source.isVariant)
                }
                return
            }
            let outcome = decoder.decode(loaded)
            if case .failure = outcome, source.isVariant || loaded.fileCacheEntryVanished {
                // A bad variant: fall back to the original. An entry whose file vanished: a miss.
                fileCache?.removeEntry(forKey: source.fileKey)
                continue
            }
            completeDecode(job, outcome: outcome, synchronousUser: synchronousUser, countingFileCacheHit: true)
            // Delivered; now store the variant made from the original, never on the caller's
            // thread (which may be the main one): on the loading executor.
            if case .success(let object) = outcome, !source.isVariant, decoder.storesVariant {
                if synchronously {
                    LoadingTask.start { [weak self] in
                        self?.storeVariantIfNeeded(job, object: object)
                    }
                } else {
                    storeVariantIfNeeded(job, object: object)
                }
            }
            return
        }
        let now = configuration.failureClock()
        let start: @Sendable (inout ManagerState) -> PendingWork = { [core] state in
            core.decide(.fileLookupMissed(key, generation: generation), at: now, in: &state).work
        }
        // Out of its time already: the start does not wait for the lock at all.
        performer.performSection(start, synchronousUser: synchronousUser, lockWait: outOfBudget ? 0 : nil)
    }

    /// A file-cache hit read on the caller's thread past its time budget, decoded and delivered on
    /// the loading executor instead; a bad variant, or an entry whose file vanished, falls back to
    /// a load.
    func decodeFileCacheHit(_ job: DecodeJob, fileKey: String, isVariant: Bool) {
        let outcome = job.decoder.decode(job.data)
        if case .failure = outcome, isVariant || job.data.fileCacheEntryVanished {
            fileCache?.removeEntry(forKey: fileKey)
            loadAfterFileCacheEntryFailed(job)
            return
        }
        completeDecode(job, outcome: outcome, countingFileCacheHit: true)
        if case .success(let object) = outcome, !isVariant, job.decoder.storesVariant {
            storeVariantIfNeeded(job, object: object)
        }
    }

    /// Loads `job`'s key again, as after a file-cache miss, when the file-cache bytes it decoded
    /// turned out unusable (a bad variant, an entry whose file vanished) and its handler still
    /// waits for that decode.
    func loadAfterFileCacheEntryFailed(_ job: DecodeJob) {
        let work = decide(.fileLookupMissed(job.key, generation: job.generation)).work
        performer.perform(work)
    }

    /// After decoding original bytes, stores the decoder's variant in the file cache (and drops the
    /// original if the decoder does not keep it).
    func storeVariantIfNeeded(_ job: DecodeJob, object: any Sendable) {
        guard job.decoder.storesVariant, !job.data.isStoredVariant, let fileCache else { return }
        let policy = state.withLock { $0.handlers[job.key]?.policy } ?? configuration.policy
        guard policy.cacheInFile, job.writeGate?.isClosed != true, let bytes = job.decoder.encodedVariant(of: object) else { return }
        // Through the decode's gate: an object stored over this one meanwhile keeps its place.
        WriteGate.write(through: job.writeGate) {
            do {
                try fileCache.store(bytes, forKey: Self.variantFileKey(job.key), metadata: FileCacheMetadata())
                if !job.decoder.keepsOriginal { fileCache.removeEntry(forKey: job.key.dataKey) }
            } catch {
                report(.fileCacheFailure(key: job.key.dataKey, operation: .storeVariant, error: FileCacheError(error)))
            }
        }
    }
}
