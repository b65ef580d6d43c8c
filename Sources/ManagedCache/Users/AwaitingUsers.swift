import Foundation
import ManagedCacheLocking

/// The user behind one `await manager.object(...)` call: resumes its continuation exactly once.
/// Managed as an awaiting caller: its code waits on the cooperative pool, never on the main
/// thread, so a small file-cache hit is read where it waits (see `inlineFileRead`).
final class AwaitingUser<Decoder: ObjectDecoding>: ManagedObjectUser {
    private enum Slot {
        case waiting
        case installed(CheckedContinuation<Decoder.Object, any Error>)
        case finished
    }

    let objectRequest: ObjectRequest?
    let objectDecoder: Decoder
    private let progress: (@Sendable (LoadProgress) -> Void)?
    private let slot = Lock<Slot>(.waiting)

    init(request: ObjectRequest, decoder: Decoder, progress: (@Sendable (LoadProgress) -> Void)?) {
        self.objectRequest = request
        self.objectDecoder = decoder
        self.progress = progress
    }

    /// Stores the continuation; returns `false` (having resumed it) if the task was already cancelled.
    func install(_ continuation: CheckedContinuation<Decoder.Object, any Error>) -> Bool {
        let alreadyFinished = slot.withLock { slot -> Bool in
            if case .finished = slot { return true }
            slot = .installed(continuation)
            return false
        }
        if alreadyFinished { continuation.resume(throwing: ManagedCacheError.cancelled(.caller)) }
        return !alreadyFinished
    }

    func finish(_ result: Result<Decoder.Object, ManagedCacheError>) {
        let continuation = slot.withLock { slot -> CheckedContinuation<Decoder.Object, any Error>? in
            defer { slot = .finished }
            if case .installed(let continuation) = slot { return continuation }
            return nil
        }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }

    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        finish(.success(object))
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        finish(.failure(error))
    }

    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        self.progress?(progress)
    }
}

/// The user behind one `loadEvents` stream (managed as an awaiting caller, like `AwaitingUser`).
final class StreamingUser<Decoder: ObjectDecoding>: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder: Decoder
    private let continuation: AsyncThrowingStream<LoadEvent<Decoder.Object>, any Error>.Continuation

    init(
        request: ObjectRequest, decoder: Decoder,
        continuation: AsyncThrowingStream<LoadEvent<Decoder.Object>, any Error>.Continuation
    ) {
        self.objectRequest = request
        self.objectDecoder = decoder
        self.continuation = continuation
    }

    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        continuation.yield(.object(object, origin))
        continuation.finish()
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        continuation.finish(throwing: error)
    }

    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        continuation.yield(.progress(progress))
    }
}
