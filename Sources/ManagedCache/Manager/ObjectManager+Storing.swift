import Foundation

/// Why a stored object did not reach the file cache, or could not be made.
///
/// The memory part of a store never fails: once `ObjectManager.store` returns, the object is in
/// the memory cache (unless the request's policy keeps it out) and with every user of its key.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request's key is empty: nothing can be stored under it.
    case invalidRequest(reason: String)
    /// The file cache was asked for, but the manager has none or the request's policy keeps the
    /// object out of it (`cacheInFile == false`).
    case fileCacheUnavailable
    /// The decoder cannot turn the object back into bytes (`ObjectDecoding.encode(_:)` returned `nil`).
    case encodingUnsupported
    /// The decoder's `encode(_:)` threw.
    case encodingFailed(reason: String)
    /// The closure making the object threw (`store(for:decoder:toFileCache:pinned:cost:making:completion:)`).
    case makingFailed(reason: String)
    /// The file cache refused the bytes (disk full, read-only, …; a pinned store over the pinned
    /// quota: ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)``, or in a
    /// cache that cannot pin: ``FileCacheError/pinningUnsupported``).
    case fileCacheFailed(FileCacheError)
    /// A later store of the same key replaced this object before its bytes were written, or the
    /// manager cancelled every load (`cancelAll()`) while it was being made.
    case superseded

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .fileCacheUnavailable: "no file cache for this object"
        case .encodingUnsupported: "the decoder cannot encode this object"
        case .encodingFailed(let reason): "encoding failed: \(reason)"
        case .makingFailed(let reason): "making the object failed: \(reason)"
        case .fileCacheFailed(let error): "the file cache failed: \(error)"
        case .superseded: "superseded by a later store"
        }
    }
}

extension ObjectRequest {
    /// A request for the object known by `oid` alone, with no URL to load it from: for storing an
    /// object the app made (`ObjectManager.store`) and finding it again by its oid. Its `url` is
    /// `cacheOnlyURL`, which no loader loads, so a user managed with it gets the object from the
    /// memory cache (or a user sharing it) and `.invalidRequest` otherwise. Give a request with a
    /// real URL and the same oid where the object may have to be loaded again.
    ///
    /// - Parameter oid: The object's identifier, the whole of its key (with the decoder's).
    public init(oid: String) {
        self.init(url: ObjectRequest.cacheOnlyURL, oid: oid)
    }

    /// The URL of `ObjectRequest(oid:)`: "managedcache:stored", a scheme no loader handles.
    public static let cacheOnlyURL = URL(string: "managedcache:stored")!
}

extension ObjectManager {
    // MARK: - Storing an object the app has

    /// Stores `object`, which the app already has (an edited photo, a thumbnail it drew, a JSON
    /// document built offline), under the key a later `manage`, `object(for:decoder:)` or
    /// `cachedObject(for:decoder:)` of `request` (or of any request with its oid) and `decoder`
    /// uses: SDWebImage's `storeImage:forKey:`.
    ///
    /// Before this returns:
    /// - the object is in the memory cache (unless the request's policy says `cacheInMemory == false`),
    ///   so the next `manage` of the key is a memory hit;
    /// - every user waiting for the key receives it (origin `.stored`), and so does every user
    ///   sharing the key's previous object: one shared object, as if it had loaded;
    /// - a load of the key under way is superseded: it is cancelled if nobody else wants its bytes,
    ///   its result is ignored, and nothing it writes lands in the file cache over the stored object.
    ///
    /// With `toFileCache`, the decoder's `encode(_:)` bytes are written to the file cache
    /// afterwards, in the background (never on the calling thread): under the request's data key
    /// (a later download of it is not needed), or under the variant's own key for a decoder that
    /// stores variants. Without it, the file cache keeps whatever it had for the key. Objects other
    /// decoders made from the key's previous bytes stay in memory until evicted or removed.
    ///
    /// - Parameters:
    ///   - object: The object users of the key share from now on.
    ///   - request: The request whose key the object goes under; only its key (oid or URL, key
    ///     headers) and policy matter. `ObjectRequest(oid:)` names an object by its oid alone.
    ///   - decoder: The decoder whose identifier completes the key, and which encodes the object.
    ///   - toFileCache: Whether to write the object's bytes to the file cache too. Default `false`.
    ///   - pinned: Whether those bytes are pinned in the file cache (kept by its limits, trims and
    ///     expiry until unpinned or removed; see ``pin(_:)``). Needs `toFileCache`. Default `false`.
    ///   - cost: The object's memory-cache cost in bytes. Default `nil`: the decoder's
    ///     `cost(of:byteCount:)` with a byte count of 0 (exact for images and `Data`; pass a size
    ///     for decoders that measure objects by their bytes, such as JSON models).
    ///   - completion: Called once, on any thread (before `store` returns when there is nothing to
    ///     write), with `.success` or why the file cache did not get the object. Default `nil`.
    public func store<Decoder: ObjectDecoding>(
        _ object: Decoder.Object, for request: ObjectRequest, decoder: Decoder, toFileCache: Bool = false,
        pinned: Bool = false, cost: Int? = nil, completion: (@Sendable (Result<Void, StoreError>) -> Void)? = nil
    ) {
        let plan: StorePlan
        switch makeStorePlan(request, decoder: decoder, toFileCache: toFileCache, pinned: pinned) {
        case .success(let made): plan = made
        case .failure(let error):
            completion?(.failure(error))
            return
        }
        let cost = max(0, cost ?? decoder.cost(of: object, byteCount: 0))
        let (work, ticket) = state.withLock { state -> (PendingWork, StoreTicket) in
            var work = PendingWork()
            let ticket = _supersede(for: plan, work: &work, in: &state)
            _ = state.handlers[plan.key]?.startStoring()
            _deliverStored(object, plan: plan, cost: cost, work: &work, in: &state)
            return (work, ticket)
        }
        perform(work)
        writeStoredBytes(
            plan: plan, ticket: ticket, encode: { try decoder.encode(object) }, completion: { completion?($0) })
    }

    /// `store(_:for:decoder:toFileCache:pinned:cost:completion:)`, awaiting the file cache: returns once
    /// the bytes are written (at once without `toFileCache`), throws why they were not. The memory
    /// cache and the users of the key have the object before the first suspension.
    ///
    /// - Parameters:
    ///   - object: The object users of the key share from now on.
    ///   - request: The request whose key the object goes under; only its key and policy matter.
    ///     `ObjectRequest(oid:)` names an object by its oid alone.
    ///   - decoder: The decoder whose identifier completes the key, and which encodes the object.
    ///   - toFileCache: Whether to write the object's bytes to the file cache too. Default `false`.
    ///   - pinned: Whether those bytes are pinned in the file cache (kept by its limits, trims and
    ///     expiry until unpinned or removed; see ``pin(_:)``). Needs `toFileCache`. Default `false`.
    ///   - cost: The object's memory-cache cost in bytes. Default `nil`: the decoder's
    ///     `cost(of:byteCount:)` with a byte count of 0.
    /// - Throws: ``StoreError`` when the file cache did not get the object (only with
    ///   `toFileCache`), or `.invalidRequest` for an empty key. The memory part never fails.
    public func store<Decoder: ObjectDecoding>(
        _ object: Decoder.Object, for request: ObjectRequest, decoder: Decoder, toFileCache: Bool = false,
        pinned: Bool = false, cost: Int? = nil
    ) async throws(StoreError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, StoreError>, Never>) in
            store(object, for: request, decoder: decoder, toFileCache: toFileCache, pinned: pinned, cost: cost) {
                continuation.resume(returning: $0)
            }
        }
        try result.get()
    }

    /// Stores the object `make` returns, made in the background (never on the calling thread):
    /// for objects worth sharing that take a while to make, such as an image resized to a format.
    ///
    /// From the call on, the key is taken: its previous object leaves the memory cache, a load of
    /// it under way is superseded (as `store(_:for:decoder:toFileCache:pinned:cost:completion:)`
    /// describes), and users that manage it meanwhile wait for the object instead of starting a
    /// load. When `make` returns, the object is stored exactly like an object passed to `store`
    /// (memory cache, users, file cache when asked). When it throws, the users waiting for it fail
    /// with `.decodingFailed` (nothing is remembered as failed, nothing is purged from the caches).
    ///
    /// - Parameters:
    ///   - request: The request whose key the object goes under (see `store`).
    ///   - decoder: The decoder whose identifier completes the key, and which encodes the object.
    ///   - toFileCache: Whether to write the object's bytes to the file cache too. Default `false`.
    ///   - pinned: Whether those bytes are pinned in the file cache (kept by its limits, trims and
    ///     expiry until unpinned or removed; see ``pin(_:)``). Needs `toFileCache`. Default `false`.
    ///   - cost: The memory-cache cost. Default `nil`: the decoder's `cost(of:byteCount:)` with 0 bytes.
    ///   - make: Makes the object, once, on the manager's loading executor.
    ///   - completion: Called once, on any thread, with the object once it is stored (and written,
    ///     with `toFileCache`), or why not. Default `nil`.
    public func store<Decoder: ObjectDecoding>(
        for request: ObjectRequest, decoder: Decoder, toFileCache: Bool = false, pinned: Bool = false, cost: Int? = nil,
        making make: @escaping @Sendable () throws -> Decoder.Object,
        completion: (@Sendable (Result<Decoder.Object, StoreError>) -> Void)? = nil
    ) {
        let plan: StorePlan
        switch makeStorePlan(request, decoder: decoder, toFileCache: toFileCache, pinned: pinned) {
        case .success(let made): plan = made
        case .failure(let error):
            completion?(.failure(error))
            return
        }
        let identifier = decoder.identifier
        let (work, ticket, generation) = state.withLock { state -> (PendingWork, StoreTicket, UInt64) in
            var work = PendingWork()
            let ticket = _supersede(for: plan, work: &work, in: &state)
            let handler: ObjectHandler
            if let existing = state.handlers[plan.key] {
                handler = existing
            } else {
                handler = ObjectHandler(
                    key: plan.key, decoder: AnyObjectDecoder(decoder, identifier: identifier), request: request,
                    policy: plan.policy)
                state.handlers[plan.key] = handler
            }
            return (work, ticket, handler.startStoring())
        }
        perform(work)
        LoadingTask.start { [self] in
            let made: Result<Decoder.Object, StoreError>
            do {
                made = .success(try make())
            } catch {
                made = .failure(.makingFailed(reason: String(describing: error)))
            }
            finishMaking(made, decoder: decoder, plan: plan, ticket: ticket, generation: generation, cost: cost, completion: completion)
        }
    }

    /// `store(for:decoder:toFileCache:pinned:cost:making:completion:)`, awaiting the object: returns it
    /// once it is stored (and written, with `toFileCache`), throws why not.
    ///
    /// - Parameters:
    ///   - request: The request whose key the object goes under (see `store`).
    ///   - decoder: The decoder whose identifier completes the key, and which encodes the object.
    ///   - toFileCache: Whether to write the object's bytes to the file cache too. Default `false`.
    ///   - pinned: Whether those bytes are pinned in the file cache (kept by its limits, trims and
    ///     expiry until unpinned or removed; see ``pin(_:)``). Needs `toFileCache`. Default `false`.
    ///   - cost: The memory-cache cost. Default `nil`: the decoder's `cost(of:byteCount:)` with 0 bytes.
    ///   - make: Makes the object, once, on the manager's loading executor.
    /// - Returns: The object `make` returned, once it is stored.
    /// - Throws: ``StoreError``: `.makingFailed` when `make` threw, `.superseded` when a later
    ///   store of the key replaced it, or why the file cache did not get it (with `toFileCache`).
    @discardableResult
    public func store<Decoder: ObjectDecoding>(
        for request: ObjectRequest, decoder: Decoder, toFileCache: Bool = false, pinned: Bool = false, cost: Int? = nil,
        making make: @escaping @Sendable () throws -> Decoder.Object
    ) async throws(StoreError) -> Decoder.Object {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Decoder.Object, StoreError>, Never>) in
            store(for: request, decoder: decoder, toFileCache: toFileCache, pinned: pinned, cost: cost, making: make) {
                continuation.resume(returning: $0)
            }
        }
        return try result.get()
    }

    // MARK: - How a store proceeds

    /// What a store does, decided before the lock.
    struct StorePlan: Sendable {
        let key: ObjectKey
        let policy: LoadPolicy
        /// The file-cache key the object's bytes go under: the data key, or the variant's key.
        let fileKey: String
        /// The caller asked for the file cache.
        let asksForFile: Bool
        /// The bytes go to the file cache (asked, a file cache exists, the policy allows it).
        let writesFile: Bool
        /// The bytes are pinned in the file cache.
        var pinned = false

        /// The bytes go under the data key itself (a decoder that stores no variant): the
        /// download of that key, whoever it is for, must not commit over them.
        var writesDataKey: Bool { writesFile && fileKey == key.dataKey }
    }

    /// A store whose bytes are still to be written (`ManagerState.pendingStores`).
    struct PendingStore {
        /// The object key it stores.
        let key: ObjectKey
        /// The gate its write goes through.
        let gate: WriteGate
    }

    /// What `_supersede` took over: the writes the store's own write waits for, and its own gate.
    struct StoreTicket: Sendable {
        /// Gates closed for the store; a write begun through one before is waited for.
        var superseded: [WriteGate] = []
        /// The store's own gate, when it writes the file cache.
        var own: WriteGate?
    }

    private func makeStorePlan<Decoder: ObjectDecoding>(
        _ request: ObjectRequest, decoder: Decoder, toFileCache: Bool, pinned: Bool
    ) -> Result<StorePlan, StoreError> {
        let key = request.objectKey(variant: decoder.identifier)
        guard !key.dataKey.isEmpty else { return .failure(.invalidRequest(reason: "empty key")) }
        // Checked before anything is stored: a pin asked for bytes that are not written is a mistake to say.
        guard !pinned || toFileCache else { return .failure(.invalidRequest(reason: "pinned without toFileCache")) }
        let policy = configuration.policy.applying(request.policy)
        var plan = StorePlan(
            key: key, policy: policy, fileKey: decoder.storesVariant ? Self.variantFileKey(key) : key.dataKey,
            asksForFile: toFileCache, writesFile: toFileCache && policy.cacheInFile && fileCache != nil)
        plan.pinned = pinned
        return .success(plan)
    }

    /// Under the lock: takes the key from whatever had it. Its remembered failures and its old
    /// memory-cache object go; its load leaves its fetch (cancelled when nobody else wants it);
    /// every gate its pending writes go through is closed (the fetch's commit when the store
    /// writes the data key, the decode's variant, an earlier store's bytes).
    private func _supersede(for plan: StorePlan, work: inout PendingWork, in state: inout ManagerState) -> StoreTicket {
        let key = plan.key
        var ticket = StoreTicket()
        if plan.writesFile {
            state.failures.forget(dataKey: key.dataKey)
        } else {
            state.failures.forget(key)
        }
        if let removed = memoryCache.removeValue(forKey: key) { work.released.append(removed.object) }
        state.loadingBuffer.remove(key)
        if let handler = state.handlers[key] {
            if case .loading(let fetch) = handler.phase {
                ticket.superseded += _leaveFetch(key, fetch: fetch, closing: plan.writesDataKey, work: &work, in: &state)
            }
            if let fetch = handler.revalidatingFetch {
                ticket.superseded += _leaveFetch(key, fetch: fetch, closing: plan.writesDataKey, work: &work, in: &state)
            }
            if let gate = handler.writeGate {
                gate.close()
                ticket.superseded.append(gate)
            }
        }
        if plan.writesDataKey {
            undecodedData.removeValue(forKey: key.dataKey)
            if let fetch = state.fetches[key.dataKey] {
                fetch.writeGate.close()
                ticket.superseded.append(fetch.writeGate)
            }
        }
        // An earlier store's bytes still to be written under the same file key: replaced by these
        // bytes, or (without them) superseded when they are the same object key's.
        if let previous = state.pendingStores[plan.fileKey], plan.writesFile || previous.key == key {
            state.pendingStores.removeValue(forKey: plan.fileKey)
            previous.gate.close()
            ticket.superseded.append(previous.gate)
        }
        if plan.writesFile {
            let own = WriteGate()
            state.pendingStores[plan.fileKey] = PendingStore(key: key, gate: own)
            ticket.own = own
        }
        state.statistics.storedObjects += 1
        return ticket
    }

    /// Under the lock: `key`'s handler stops waiting for fetch `identifier`. A fetch nobody else
    /// wants is cancelled (freeing its prefetch slot); its gate is closed then, or when `closing`.
    private func _leaveFetch(
        _ key: ObjectKey, fetch identifier: UInt64, closing: Bool, work: inout PendingWork, in state: inout ManagerState
    ) -> [WriteGate] {
        guard let fetch = state.fetches[key.dataKey], fetch.identifier == identifier else { return [] }
        fetch.subscribers.remove(key)
        if fetch.isWanted {
            _refreshPriority(dataKey: key.dataKey, in: &state)
            guard closing else { return [] }
        } else {
            work.cancel(fetch.task)  // after the lock, as every cancellation
            state.fetches.removeValue(forKey: key.dataKey)
            state.prefetchWatch.settleFetch(fetch.identifier, .cancelled)
            if fetch.inPrefetchLane {
                state.runningPrefetches -= 1
                work.append(_startQueuedPrefetches(in: &state))
            }
        }
        fetch.writeGate.close()
        return [fetch.writeGate]
    }

    /// Under the lock: the handler (after `startStoring`) becomes ready with `object` and its live
    /// users receive it; the object goes to the memory cache.
    private func _deliverStored(
        _ object: any Sendable, plan: StorePlan, cost: Int, work: inout PendingWork, in state: inout ManagerState
    ) {
        if let handler = state.handlers[plan.key], handler.phase.isLoaded {
            handler.finishDecoding(object: object, origin: .stored, freshness: nil, cost: cost)
            state.prefetchWatch.settleHandler(plan.key, .loaded(.stored))
            work.deliveries += handler.deliveries(of: .ready(object, .stored))
        }
        if plan.policy.cacheInMemory {
            work.released += memoryCache.setValue(
                CachedObject(object: object, freshness: nil, cost: cost), forKey: plan.key, cost: cost
            ).map(\.object)
        }
    }

    /// A made object is stored if the key is still waiting for it (same generation); a failure
    /// fails the users waiting for it.
    private func finishMaking<Decoder: ObjectDecoding>(
        _ made: Result<Decoder.Object, StoreError>, decoder: Decoder, plan: StorePlan, ticket: StoreTicket,
        generation: UInt64, cost: Int?, completion: (@Sendable (Result<Decoder.Object, StoreError>) -> Void)?
    ) {
        let objectCost = (try? made.get()).map { max(0, cost ?? decoder.cost(of: $0, byteCount: 0)) } ?? 0
        let (work, current) = state.withLock { state -> (PendingWork, Bool) in
            var work = PendingWork()
            guard let handler = state.handlers[plan.key], handler.generation == generation, handler.phase.isLoaded else {
                return (work, false)
            }
            switch made {
            case .success(let object):
                _deliverStored(object, plan: plan, cost: objectCost, work: &work, in: &state)
            case .failure(let error):
                handler.fail(.decodingFailed(reason: error.description))
                state.prefetchWatch.settleHandler(plan.key, .failed(.decodingFailed(reason: error.description)))
                work.deliveries += handler.deliveries(of: .failed(.decodingFailed(reason: error.description)))
                handler.endUsersRequests()
            }
            return (work, true)
        }
        perform(work)
        switch made {
        case .success(let object) where current:
            writeStoredBytes(
                plan: plan, ticket: ticket, encode: { try decoder.encode(object) },
                completion: { result in completion?(result.map { object }) })
        case .success:
            abandonStoreGate(plan: plan, ticket: ticket)
            completion?(.failure(.superseded))
        case .failure(let error):
            abandonStoreGate(plan: plan, ticket: ticket)
            completion?(.failure(error))
        }
    }

    /// Writes the stored object's bytes when the plan says so, in the background; reports to `completion`.
    private func writeStoredBytes(
        plan: StorePlan, ticket: StoreTicket, encode: @escaping @Sendable () throws -> Data?,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        guard plan.asksForFile else {
            completion(.success(()))
            return
        }
        guard plan.writesFile, let own = ticket.own, let fileCache else {
            completion(.failure(.fileCacheUnavailable))
            return
        }
        LoadingTask.start { [self] in
            let result = await write(encode, plan: plan, after: ticket.superseded, through: own, to: fileCache)
            abandonStoreGate(plan: plan, ticket: ticket)
            completion(result)
        }
    }

    /// Encodes, waits for the superseded writes that had begun, then writes through `own` (skipped
    /// when a later store closed it).
    private func write(
        _ encode: @Sendable () throws -> Data?, plan: StorePlan, after superseded: [WriteGate], through own: WriteGate,
        to fileCache: any FileCaching
    ) async -> Result<Void, StoreError> {
        let bytes: Data
        do {
            guard let encoded = try encode() else { return .failure(.encodingUnsupported) }
            bytes = encoded
        } catch {
            return .failure(.encodingFailed(reason: String(describing: error)))
        }
        for gate in superseded { await gate.waitUntilIdle() }
        var outcome: Result<Void, StoreError> = .failure(.superseded)
        own.write {
            do {
                try fileCache.store(bytes, forKey: plan.fileKey, metadata: FileCacheMetadata(), pinned: plan.pinned)
                // Kept bytes of an interrupted download of the old object must not be resumed over it.
                if plan.writesDataKey { fileCache.discardPartialDownload(forKey: plan.key.dataKey) }
                outcome = .success(())
            } catch {
                report(.fileCacheFailure(key: plan.fileKey, operation: .storeObject, error: FileCacheError(error)))
                outcome = .failure(.fileCacheFailed(FileCacheError(error)))
            }
        }
        return outcome
    }

    /// The store's gate leaves the table (if a later store has not replaced it already).
    private func abandonStoreGate(plan: StorePlan, ticket: StoreTicket) {
        guard let own = ticket.own else { return }
        own.close()
        state.withLock { state in
            if state.pendingStores[plan.fileKey]?.gate === own { state.pendingStores.removeValue(forKey: plan.fileKey) }
        }
    }
}
