import Foundation
import ManagedCacheLocking

/// Reads the file cache where the core decided to look (`LoadCore.Decision.fileLookup`): a hit
/// is decoded and handed to the core (`decodeFinished`), a miss asks it to start the load
/// (`fileLookupMissed`). Also writes a decoder's variant made from original bytes, and answers
/// `manage` whether the cache's index certainly lacks a key. Owned by its manager alone, so its
/// background steps hold it weakly and stop once the manager has gone.
final class FileCacheReader: Sendable {
    let state: ManagerLock
    let core: LoadCore
    let performer: WorkPerformer
    let fileCache: (any FileCaching)?
    /// Counts and reports a file-cache failure (`ObjectManager.report`).
    let report: @Sendable (ManagerEvent) -> Void
    /// What each decoder (by identifier) may decode on the caller's thread: entries smaller than
    /// the smallest one whose decode there took longer than
    /// `Configuration.synchronousDecodeTimeBudget`. Absent: up to the read's own limit.
    private let inlineDecodeLimits = InlineDecodeLimits()

    init(
        state: ManagerLock, core: LoadCore, performer: WorkPerformer, report: @escaping @Sendable (ManagerEvent) -> Void
    ) {
        self.state = state
        self.core = core
        self.performer = performer
        self.fileCache = core.configuration.fileCache
        self.report = report
    }

    private var configuration: ObjectManager.Configuration { core.configuration }
    private var undecodedData: MemoryCache<String, Data> { core.undecodedData }

    /// Whether a start of this `manage` call would look in the file cache on this thread, and the
    /// cache's index has no entry for its bytes (`FileCaching.indexLacksEntry(forKey:)`: no system
    /// call and no lock). An entry another instance stored since this one last caught up is not
    /// seen here; the load's task looks in the cache before downloading, so it is still read from
    /// disk, in the background. A decoder that stores a variant looks up two keys, and is not
    /// asked for. Nor when `mayBeRefused` (asked only when the rest allows the shortcut): the
    /// failure memory may answer the call, which then needs no lookup (see `RefusalHints`).
    func isKnownMiss(
        _ call: ManageCall, key: ObjectKey, policy: LoadPolicy, storesVariant: Bool, mayBeRefused: @autoclosure () -> Bool
    ) -> Bool {
        guard let fileCache, policy.cacheInFile, !storesVariant,
            core.inlineFileRead(isAwaiting: call.isAwaiting, request: call.request, policy: policy) != nil,
            !mayBeRefused()
        else { return false }
        return fileCache.indexLacksEntry(forKey: key.dataKey)
    }

    /// Reads the file cache for `key` as `manage` decided (`LoadCore.Decision.fileLookup`): on
    /// this thread within the inline budget, else in the background.
    func read(_ lookup: FileLookup, key: ObjectKey, synchronousUser: ObjectIdentifier) {
        if let inline = lookup.inline {
            read(lookup, key: key, synchronousUser: synchronousUser, maximumBytes: inline.maximumBytes)
        } else {
            LoadingTask.start { [weak self] in
                self?.read(lookup, key: key, synchronousUser: nil, maximumBytes: nil)
            }
        }
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
    func read(_ lookup: FileLookup, key: ObjectKey, synchronousUser: ObjectIdentifier?, maximumBytes: Int?) {
        let synchronously = synchronousUser != nil
        let (generation, policy, decoder, request, writeGate) = (
            lookup.generation, lookup.policy, lookup.decoder, lookup.request, lookup.writeGate
        )
        // On the caller's thread, an entry this decoder has been too slow to decode there before
        // (or a larger one) is a miss here: the load reads and decodes it in the background.
        let maximumBytes = synchronously ? inlineDecodeLimits.limit(for: decoder.identifier, within: maximumBytes) : maximumBytes
        if !synchronously {
            let current = state.withLock { state in state.handlers[key]?.generation == generation }
            guard current else { return }
        }
        var sources: [(fileKey: String, isVariant: Bool)] = []
        if decoder.storesVariant { sources.append((key.variantFileKey, true)) }
        if synchronously { sources.append((key.dataKey, false)) }
        var outOfBudget = false
        for source in sources {
            let operation = FetchOperation(
                dataKey: source.fileKey, request: request, policy: policy, loader: configuration.dataLoader,
                fileCache: fileCache, undecoded: undecodedData, inMemoryThreshold: configuration.inMemoryThreshold,
                priority: LoadPriorityCell(request.priority), callbacks: .eventsOnly { [report] in report($0) })
            let readStart = MonotonicInstant.now
            // On the caller's thread each wait for the file cache's own lock lasts at most
            // `manageLockWaitBudget`, and ends by the time budget: past it the lookup is left to
            // the load, which reads the cache first, in the background.
            let budget =
                synchronously
                ? FetchOperation.ReadBudget(
                    start: readStart, time: configuration.synchronousFileReadTimeBudget,
                    lockWait: configuration.manageLockWaitBudget)
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
            let decodeStart = MonotonicInstant.now
            let outcome = decoder.decode(loaded)
            if synchronously,
                MonotonicInstant.now.seconds(since: decodeStart) > configuration.synchronousDecodeTimeBudget
            {
                inlineDecodeLimits.lower(for: decoder.identifier, below: loaded.byteCount)
            }
            if case .failure = outcome, source.isVariant || loaded.fileCacheEntryVanished {
                // A bad variant: fall back to the original. An entry whose file vanished: a miss.
                fileCache?.removeEntry(forKey: source.fileKey)
                continue
            }
            performer.completeDecode(job, outcome: outcome, synchronousUser: synchronousUser, countingFileCacheHit: true)
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
            performer.loadAfterUnusableFileCacheEntry(job)
            return
        }
        performer.completeDecode(job, outcome: outcome, countingFileCacheHit: true)
        if case .success(let object) = outcome, !isVariant, job.decoder.storesVariant {
            storeVariantIfNeeded(job, object: object)
        }
    }

    /// After decoding original bytes, stores the decoder's variant in the file cache (and drops the
    /// original if the decoder does not keep it), under `policy` (when not given, the handler's).
    func storeVariantIfNeeded(_ job: DecodeJob, object: any Sendable, policy: LoadPolicy? = nil) {
        guard job.decoder.storesVariant, !job.data.isStoredVariant, let fileCache else { return }
        let policy = policy ?? state.withLock { $0.handlers[job.key]?.policy } ?? configuration.policy
        guard policy.cacheInFile, job.writeGate?.isClosed != true, let bytes = job.decoder.encodedVariant(of: object) else { return }
        // Through the decode's gate: an object stored over this one meanwhile keeps its place.
        WriteGate.write(through: job.writeGate) {
            do {
                try fileCache.store(bytes, forKey: job.key.variantFileKey, metadata: FileCacheMetadata())
                if !job.decoder.keepsOriginal { fileCache.removeEntry(forKey: job.key.dataKey) }
            } catch {
                report(.fileCacheFailure(key: job.key.dataKey, operation: .storeVariant, error: FileCacheError(error)))
            }
        }
    }

    /// Decodes the file cache's entries `policy` picks into the memory cache, at most `limit`, on
    /// the preload's task (`ObjectManager.preloadFromFileCache`); stops when that task is
    /// cancelled. A decoder that stores variants preloads its variants, any other the originals
    /// (never a variant taken for an original).
    func preload(_ policy: PreloadPolicy, from fileCache: any FileCaching, decoder: AnyObjectDecoder, limit: Int) -> Int {
        let entries =
            policy == .all
            ? fileCache.entriesByRecency(limit: Int.max)
            : fileCache.entriesUsedInPreviousSession(limit: Int.max)
        let marker = ObjectKey.variantMarker
        let suffix = marker + decoder.identifier
        var candidates: [(FileCacheEntry, ObjectKey)] = []
        for entry in entries where candidates.count < limit {
            if decoder.storesVariant {
                guard entry.key.hasSuffix(suffix) else { continue }
                candidates.append((entry, ObjectKey(dataKey: String(entry.key.dropLast(suffix.count)), variant: decoder.identifier)))
            } else if !entry.key.contains(marker) {
                candidates.append((entry, ObjectKey(dataKey: entry.key, variant: decoder.identifier)))
            }
        }
        var preloaded = 0
        // Least recent first, so the most recent ends up most recent in the LRU order.
        for (entry, key) in candidates.reversed() {
            if Task.isCancelled { break }
            if core.memoryCache.contains(key) { continue }
            guard let bytes = try? fileCache.readData(for: entry) else { continue }
            let data = LoadedData(
                data: bytes, origin: .fileCache, contentType: entry.metadata.contentType,
                isStoredVariant: decoder.storesVariant)
            guard case .success(let object) = decoder.decode(data), !Task.isCancelled else { continue }
            let cost = decoder.cost(of: object, byteCount: bytes.count)
            core.memoryCache.setValue(
                CachedObject(object: object, freshness: entry.metadata.freshness, cost: cost),
                forKey: key, cost: cost)
            preloaded += 1
        }
        return preloaded
    }

    /// Pins the cached bytes of `request` when its policy asks for pins
    /// (``LoadPolicy/pinsInFileCache``, the manager's with the request's overrides): for a load
    /// that finished without writing them (already in the memory or file cache, or a fetch another
    /// request had started unpinned), whose bytes the fetch's writer could not pin. Returns why
    /// the pin failed; `nil` when pinned or not asked for. Nothing cached under the key is `nil`
    /// too (a `cacheInFile == false` load, say), unless `missingBytesFail`: a prefetch that
    /// reports says so, since a pinned commit over the quota is refused and leaves nothing.
    func pinIfPolicyAsks(_ request: ObjectRequest, missingBytesFail: Bool = false) -> FileCacheError? {
        guard request.policy(over: configuration.policy).pinsInFileCache else { return nil }
        guard let fileCache else { return .pinningUnsupported }
        do {
            _ = try fileCache.pin(forKey: request.dataKey)
            return nil
        } catch {
            let failure = FileCacheError(error)
            if case .noEntry = failure, !missingBytesFail { return nil }
            return failure
        }
    }
}

/// How large an entry each decoder may decode on the caller's thread (a synchronous file-cache
/// hit, often on the main thread): learnt from its decodes there. Once a decode of `n` bytes took
/// longer than its budget, entries of `n` bytes or more of that decoder are decoded in the
/// background; the first slow decode is the only one the caller's thread pays for.
final class InlineDecodeLimits: Sendable {
    private let limits = Lock<[String: Int]>([:])

    /// The most bytes `decoder` may decode inline: `readLimit`, lowered by what was learnt.
    func limit(for decoder: String, within readLimit: Int?) -> Int? {
        guard let learnt = limits.withLock({ $0[decoder] }) else { return readLimit }
        return min(readLimit ?? .max, learnt)
    }

    /// A decode of `byteCount` bytes by `decoder` overran its budget: smaller entries only, from now on.
    func lower(for decoder: String, below byteCount: Int) {
        limits.withLock { limits in
            limits[decoder] = min(limits[decoder] ?? .max, max(0, byteCount - 1))
        }
    }
}
