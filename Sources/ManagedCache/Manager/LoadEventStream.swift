import Foundation

/// The events of one load, from `ObjectManager.loadEvents(for:decoder:)`: progress, then the
/// object; or it throws the load's `ManagedCacheError` (typed, so callers can switch over it).
///
/// ```swift
/// do {
///     for try await event in manager.loadEvents(for: request, decoder: FileURLDecoder()) {
///         if case .progress(let progress) = event { bar.update(progress.fractionCompleted) }
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
    public typealias Element = LoadEvent<Object>
    public typealias Failure = ManagedCacheError

    private let base: AsyncThrowingStream<LoadEvent<Object>, any Error>

    init(_ base: AsyncThrowingStream<LoadEvent<Object>, any Error>) {
        self.base = base
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    /// Iterates the events; throws only `ManagedCacheError`.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = LoadEvent<Object>
        public typealias Failure = ManagedCacheError

        var base: AsyncThrowingStream<LoadEvent<Object>, any Error>.Iterator

        /// The next event, or `nil` after the object; throws the load's error.
        public mutating func next() async throws(ManagedCacheError) -> LoadEvent<Object>? {
            do {
                return try await base.next()
            } catch {
                throw Self.typed(error)
            }
        }

        /// The next event, on the caller's actor.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ManagedCacheError) -> LoadEvent<Object>? {
            do {
                return try await base.next(isolation: actor)
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
