import Foundation

extension ObjectManager {
    /// Loads an object, for code that has no user object (JSON, PDFs, command-line tools).
    /// Shares handlers, loads and caches with every other user of the key.
    ///
    /// Cancelling the calling task stops waiting at once (throwing `.cancelled(.caller)`) and
    /// cancels the load if no other user wants it. Unless the request's policy says otherwise, an
    /// `async` load takes no loading-buffer slot and is not finished once abandoned, and a
    /// file-cache hit of at most ``Configuration/inMemoryThreshold`` bytes is read and decoded on
    /// the calling task, which is never the main thread (larger ones on the loading executor).
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager), `feedURL` (a URL) and `Feed` (a Decodable model with a title).
    /// let feed = try await manager.object(for: ObjectRequest(url: feedURL), decoder: JSONObjectDecoder<Feed>())
    /// ```
    ///
    /// - Parameters:
    ///   - request: What to load.
    ///   - decoder: How to decode the bytes; its identifier is part of the key.
    ///   - progress: Called with each chunk's progress, on the thread that received it. Default `nil`.
    /// - Returns: The shared object: the same instance every user of the key gets.
    /// - Throws: The load's ``ManagedCacheError``; ``ManagedCacheError/cancelled(_:)`` with
    ///   ``ManagedCacheError/CancellationReason/caller`` when the task is cancelled.
    public func object<Decoder: ObjectDecoding>(
        for request: ObjectRequest, decoder: Decoder, progress: (@Sendable (LoadProgress) -> Void)? = nil
    ) async throws(ManagedCacheError) -> Decoder.Object {
        try await delivery(for: request, decoder: decoder, progress: progress).object
    }

    /// Loads an object like ``object(for:decoder:progress:)`` and tells, beside it, where it came
    /// from and whether it is known to be current: an expired copy shown because the network
    /// failed (stale-if-error) arrives with ``ObjectFreshness/stale(revalidationError:)`` and the
    /// failure, so the app can say "may be out of date".
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager) and `feedURL` (a URL).
    /// struct Feed: Decodable, Sendable { var title: String }
    ///
    /// let delivery = try await manager.delivery(for: ObjectRequest(url: feedURL), decoder: JSONObjectDecoder<Feed>())
    /// if case .stale(let error?) = delivery.freshness { print("offline copy (\(error))") }
    /// ```
    ///
    /// - Parameters:
    ///   - request: What to load.
    ///   - decoder: How to decode the bytes; its identifier is part of the key.
    ///   - progress: Called with each chunk's progress, on the thread that received it. Default `nil`.
    /// - Returns: The shared object, its origin and its freshness.
    /// - Throws: The load's ``ManagedCacheError``; ``ManagedCacheError/cancelled(_:)`` with
    ///   ``ManagedCacheError/CancellationReason/caller`` when the task is cancelled.
    public func delivery<Decoder: ObjectDecoding>(
        for request: ObjectRequest, decoder: Decoder, progress: (@Sendable (LoadProgress) -> Void)? = nil
    ) async throws(ManagedCacheError) -> ObjectDelivery<Decoder.Object> {
        let user = AwaitingUser(request: Self.asyncRequest(request), decoder: decoder, progress: progress)
        // Once the caller has the object, only the memory cache keeps it (within its limits).
        defer { unmanage(user) }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    if user.install(continuation) { manage(user, isAwaiting: true) }
                }
            } onCancel: {
                // Only the user is told here: the runtime runs this handler holding the task's
                // status lock, which a callback resuming this task's continuation needs, and
                // `unmanage` waits for a callback running on another thread. The `defer` above
                // unmanages once the task has resumed, without that lock.
                user.finish(.failure(.cancelled(.caller)))
            }
        } catch let error as ManagedCacheError {
            throw error
        } catch {
            throw ManagedCacheError.from(loaderError: error)
        }
    }

    /// Loads the bytes at a URL as `Data`: ``object(for:decoder:progress:)`` with a ``DataDecoder``.
    ///
    /// - Parameters:
    ///   - url: Where the bytes are.
    ///   - oid: The key to use instead of the URL. Default `nil`: the URL.
    /// - Returns: The bytes.
    /// - Throws: The load's ``ManagedCacheError``.
    public func data(from url: URL, oid: String? = nil) async throws(ManagedCacheError) -> Data {
        try await dataDelivery(from: url, oid: oid).object
    }

    /// Loads the bytes at a URL as `Data`, with where they came from and whether they are known to
    /// be current: ``delivery(for:decoder:progress:)`` with a ``DataDecoder``.
    ///
    /// - Parameters:
    ///   - url: Where the bytes are.
    ///   - oid: The key to use instead of the URL. Default `nil`: the URL.
    /// - Returns: The bytes, their origin and their freshness.
    /// - Throws: The load's ``ManagedCacheError``.
    public func dataDelivery(from url: URL, oid: String? = nil) async throws(ManagedCacheError) -> ObjectDelivery<Data> {
        try await delivery(for: ObjectRequest(url: url, oid: oid), decoder: DataDecoder())
    }

    /// Loads an object as a stream of progress events ending with the object.
    ///
    /// The stream throws the load's ``ManagedCacheError`` (typed); ending iteration early, or
    /// cancelling the iterating task, cancels the load if nobody else wants it.
    ///
    /// - Parameters:
    ///   - request: What to load.
    ///   - decoder: How to decode the bytes; its identifier is part of the key.
    /// - Returns: A stream of ``LoadEvent/progress(_:)`` events, then one ``LoadEvent/object(_:_:)``.
    public func loadEvents<Decoder: ObjectDecoding>(
        for request: ObjectRequest, decoder: Decoder
    ) -> LoadEventStream<Decoder.Object> {
        LoadEventStream(deliveryEvents(for: request, decoder: decoder))
    }

    /// Loads an object as a stream of progress events ending with its delivery: the object, its
    /// origin and whether it is known to be current. ``loadEvents(for:decoder:)`` with the
    /// freshness told.
    ///
    /// The stream throws the load's ``ManagedCacheError`` (typed); ending iteration early, or
    /// cancelling the iterating task, cancels the load if nobody else wants it.
    ///
    /// - Parameters:
    ///   - request: What to load.
    ///   - decoder: How to decode the bytes; its identifier is part of the key.
    /// - Returns: A stream of ``DeliveryEvent/progress(_:)`` events, then one ``DeliveryEvent/delivered(_:)``.
    public func deliveryEvents<Decoder: ObjectDecoding>(
        for request: ObjectRequest, decoder: Decoder
    ) -> DeliveryEventStream<Decoder.Object> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: DeliveryEvent<Decoder.Object>.self)
        let user = StreamingUser(request: Self.asyncRequest(request), decoder: decoder, continuation: continuation)
        continuation.onTermination = { [weak self] _ in
            // Not here: a cancelled iteration calls this inside the task's cancellation, holding
            // the task's status lock, which a callback yielding to the stream needs, and
            // `unmanage` waits for a callback running on another thread.
            EngineThreads.workers.async { [weak self] in self?.unmanage(user) }
        }
        manage(user, isAwaiting: true)
        return DeliveryEventStream(stream)
    }

    /// An `async` request stays out of the loading buffer and is cancelled when abandoned, unless
    /// the caller's overrides say otherwise.
    static func asyncRequest(_ request: ObjectRequest) -> ObjectRequest {
        var request = request
        if request.policy.participatesInLoadingBuffer == nil { request.policy.participatesInLoadingBuffer = false }
        if request.policy.finishLoadingWithoutUsers == nil { request.policy.finishLoadingWithoutUsers = false }
        return request
    }
}
