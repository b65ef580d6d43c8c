import Foundation

/// What a load reports to ``ObjectManager/deliveryEvents(for:decoder:)``: progress, then the
/// delivery (the object, its origin and its freshness).
public enum DeliveryEvent<Object: Sendable>: Sendable {
    /// Bytes arrived.
    case progress(LoadProgress)
    /// The object is ready; the stream ends after this event.
    case delivered(ObjectDelivery<Object>)
}

/// The events of one load, from ``ObjectManager/deliveryEvents(for:decoder:)``: progress, then
/// the delivery; or it throws the load's ``ManagedCacheError`` (typed, so callers can switch over it).
///
/// ```swift
/// // Assumes `manager` (an ObjectManager) and `documentURL` (a URL).
/// do {
///     for try await event in manager.deliveryEvents(for: ObjectRequest(url: documentURL), decoder: FileURLDecoder()) {
///         switch event {
///         case .progress(let progress): print("\(Int((progress.fractionCompleted ?? 0) * 100)) %")
///         case .delivered(let delivery): print("ready at \(delivery.object.url.path) (\(delivery.freshness))")
///         }
///     }
/// } catch .httpStatus(let code) {
///     print("the server said \(code)")
/// } catch {
///     print(error)    // a ManagedCacheError
/// }
/// ```
///
/// Ending the iteration early (or dropping the stream) cancels the load if nobody else wants it.
public struct DeliveryEventStream<Object: Sendable>: AsyncSequence, Sendable {
    /// Each event is progress or the delivery.
    public typealias Element = DeliveryEvent<Object>
    /// The stream throws only ``ManagedCacheError``.
    public typealias Failure = ManagedCacheError

    private let base: AsyncThrowingStream<DeliveryEvent<Object>, any Error>

    init(_ base: AsyncThrowingStream<DeliveryEvent<Object>, any Error>) {
        self.base = base
    }

    /// Starts iterating: `for try await` calls this.
    ///
    /// - Returns: An iterator over this load's events.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    /// Iterates the events; throws only `ManagedCacheError`.
    public struct Iterator: AsyncIteratorProtocol {
        /// Each event is progress or the delivery.
        public typealias Element = DeliveryEvent<Object>
        /// The iterator throws only ``ManagedCacheError``.
        public typealias Failure = ManagedCacheError

        var base: AsyncThrowingStream<DeliveryEvent<Object>, any Error>.Iterator

        /// Waits for the next event.
        ///
        /// - Returns: The next event, or `nil` after the delivery.
        /// - Throws: The load's ``ManagedCacheError``; ``ManagedCacheError/cancelled(_:)`` when the
        ///   task is cancelled.
        public mutating func next() async throws(ManagedCacheError) -> DeliveryEvent<Object>? {
            do {
                return try await base.next()
            } catch {
                throw Self.typed(error)
            }
        }

        /// Waits for the next event, staying on the caller's actor.
        ///
        /// - Parameter actor: The caller's actor, or `nil`.
        /// - Returns: The next event, or `nil` after the delivery.
        /// - Throws: The load's ``ManagedCacheError``.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ManagedCacheError) -> DeliveryEvent<Object>? {
            do {
                return try await base.next(isolation: actor)  // portability-lint: allow in an @available method
            } catch {
                throw Self.typed(error)
            }
        }

        /// The manager finishes the stream with a `ManagedCacheError` only.
        private static func typed(_ error: any Error) -> ManagedCacheError {
            (error as? ManagedCacheError) ?? .from(loaderError: error)
        }
    }
}

/// The events of one load, from ``ObjectManager/loadEvents(for:decoder:)``: progress, then the
/// object with its origin; or it throws the load's ``ManagedCacheError`` (typed, so callers can
/// switch over it). ``DeliveryEventStream`` is the same stream with the object's freshness told.
///
/// ```swift
/// // Assumes `manager` (an ObjectManager) and `documentURL` (a URL).
/// do {
///     for try await event in manager.loadEvents(for: ObjectRequest(url: documentURL), decoder: FileURLDecoder()) {
///         switch event {
///         case .progress(let progress): print("\(Int((progress.fractionCompleted ?? 0) * 100)) %")
///         case .object(let file, _): print("ready at \(file.url.path)")
///         }
///     }
/// } catch .httpStatus(let code) {
///     print("the server said \(code)")
/// } catch {
///     print(error)    // a ManagedCacheError
/// }
/// ```
///
/// Ending the iteration early (or dropping the stream) cancels the load if nobody else wants it.
public struct LoadEventStream<Object: Sendable>: AsyncSequence, Sendable {
    /// Each event is progress or the object.
    public typealias Element = LoadEvent<Object>
    /// The stream throws only ``ManagedCacheError``.
    public typealias Failure = ManagedCacheError

    private let deliveries: DeliveryEventStream<Object>

    init(_ deliveries: DeliveryEventStream<Object>) {
        self.deliveries = deliveries
    }

    /// Starts iterating: `for try await` calls this.
    ///
    /// - Returns: An iterator over this load's events.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: deliveries.makeAsyncIterator())
    }

    /// Iterates the events; throws only `ManagedCacheError`.
    public struct Iterator: AsyncIteratorProtocol {
        /// Each event is progress or the object.
        public typealias Element = LoadEvent<Object>
        /// The iterator throws only ``ManagedCacheError``.
        public typealias Failure = ManagedCacheError

        var base: DeliveryEventStream<Object>.Iterator

        /// Waits for the next event.
        ///
        /// - Returns: The next event, or `nil` after the object.
        /// - Throws: The load's ``ManagedCacheError``; ``ManagedCacheError/cancelled(_:)`` when the
        ///   task is cancelled.
        public mutating func next() async throws(ManagedCacheError) -> LoadEvent<Object>? {
            try await base.next().map(Self.loadEvent)
        }

        /// Waits for the next event, staying on the caller's actor.
        ///
        /// - Parameter actor: The caller's actor, or `nil`.
        /// - Returns: The next event, or `nil` after the object.
        /// - Throws: The load's ``ManagedCacheError``.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ManagedCacheError) -> LoadEvent<Object>? {
            try await base.next(isolation: actor).map(Self.loadEvent)  // portability-lint: allow in an @available method
        }

        private static func loadEvent(_ event: DeliveryEvent<Object>) -> LoadEvent<Object> {
            switch event {
            case .progress(let progress): return .progress(progress)
            case .delivered(let delivery): return .object(delivery.object, delivery.origin)
            }
        }
    }
}
