import Foundation

/// The events of one load, from ``ObjectManager/loadEvents(for:decoder:)``: progress, then the
/// object; or it throws the load's ``ManagedCacheError`` (typed, so callers can switch over it).
///
/// ```swift
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

    private let base: AsyncThrowingStream<LoadEvent<Object>, any Error>

    init(_ base: AsyncThrowingStream<LoadEvent<Object>, any Error>) {
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
        /// Each event is progress or the object.
        public typealias Element = LoadEvent<Object>
        /// The iterator throws only ``ManagedCacheError``.
        public typealias Failure = ManagedCacheError

        var base: AsyncThrowingStream<LoadEvent<Object>, any Error>.Iterator

        /// Waits for the next event.
        ///
        /// - Returns: The next event, or `nil` after the object.
        /// - Throws: The load's ``ManagedCacheError``; ``ManagedCacheError/cancelled(_:)`` when the
        ///   task is cancelled.
        public mutating func next() async throws(ManagedCacheError) -> LoadEvent<Object>? {
            do {
                return try await base.next()
            } catch {
                throw Self.typed(error)
            }
        }

        /// Waits for the next event, staying on the caller's actor.
        ///
        /// - Parameter actor: The caller's actor, or `nil`.
        /// - Returns: The next event, or `nil` after the object.
        /// - Throws: The load's ``ManagedCacheError``.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ManagedCacheError) -> LoadEvent<Object>? {
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
