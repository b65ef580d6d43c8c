import Foundation

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
        guard
            let plan = makeStorePlan(
                request, decoder: decoder, toFileCache: toFileCache, pinned: pinned, failing: { completion?(.failure($0)) })
        else { return }
        let cost = max(0, cost ?? decoder.cost(of: object, byteCount: 0))
        let decision = decide(.objectStored(object, plan, cost: cost))
        performer.perform(decision.work)
        writeStoredBytes(
            plan: plan, ticket: decision.ticket, encode: { try decoder.encode(object) }, completion: { completion?($0) })
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
        guard
            let plan = makeStorePlan(
                request, decoder: decoder, toFileCache: toFileCache, pinned: pinned, failing: { completion?(.failure($0)) })
        else { return }
        let anyDecoder = AnyObjectDecoder(decoder, identifier: decoder.identifier)
        let decision = decide(.storeStarted(plan, request, anyDecoder))
        let (ticket, generation) = (decision.ticket, decision.generation)
        performer.perform(decision.work)
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

    /// What a store of `request` does, decided before the lock; `nil`, with `failing` called
    /// with why, for a request nothing can be stored under.
    private func makeStorePlan<Decoder: ObjectDecoding>(
        _ request: ObjectRequest, decoder: Decoder, toFileCache: Bool, pinned: Bool, failing: (StoreError) -> Void
    ) -> StorePlan? {
        let key = request.objectKey(variant: decoder.identifier)
        guard !key.dataKey.isEmpty else {
            failing(.invalidRequest(reason: "empty key"))
            return nil
        }
        // Checked before anything is stored: a pin asked for bytes that are not written is a mistake to say.
        guard !pinned || toFileCache else {
            failing(.invalidRequest(reason: "pinned without toFileCache"))
            return nil
        }
        let policy = request.policy(over: configuration.policy)
        var plan = StorePlan(
            key: key, policy: policy, fileKey: decoder.storesVariant ? key.variantFileKey : key.dataKey,
            asksForFile: toFileCache, writesFile: toFileCache && policy.cacheInFile && fileCache != nil)
        plan.pinned = pinned
        return plan
    }

    /// A made object is stored if the key is still waiting for it (same generation); a failure
    /// fails the users waiting for it.
    private func finishMaking<Decoder: ObjectDecoding>(
        _ made: Result<Decoder.Object, StoreError>, decoder: Decoder, plan: StorePlan, ticket: StoreTicket,
        generation: UInt64, cost: Int?, completion: (@Sendable (Result<Decoder.Object, StoreError>) -> Void)?
    ) {
        let objectCost = (try? made.get()).map { max(0, cost ?? decoder.cost(of: $0, byteCount: 0)) } ?? 0
        let decision = decide(.storeMade(made.map { $0 as any Sendable }, plan, cost: objectCost, generation: generation))
        let current = decision.isCurrent
        performer.perform(decision.work)
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
        _ = decide(.storeWritten(own, fileKey: plan.fileKey))
    }
}
