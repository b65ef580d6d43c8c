import Foundation
import ManagedCacheLocking

/// The user behind one `await manager.object(...)` call: resumes its continuation exactly once.
/// Managed as an awaiting caller: its code waits on the cooperative pool, never on the main
/// thread, so a small file-cache hit is read where it waits (see `inlineFileRead`).
final class AwaitingUser<Decoder: ObjectDecoding>: ManagedObjectUser {
    private enum Slot {
        case waiting
        case installed(CheckedContinuation<ObjectDelivery<Decoder.Object>, any Error>)
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
    func install(_ continuation: CheckedContinuation<ObjectDelivery<Decoder.Object>, any Error>) -> Bool {
        let alreadyFinished = slot.withLock { slot -> Bool in
            if case .finished = slot { return true }
            slot = .installed(continuation)
            return false
        }
        if alreadyFinished { continuation.resume(throwing: ManagedCacheError.cancelled(.caller)) }
        return !alreadyFinished
    }

    func finish(_ result: Result<ObjectDelivery<Decoder.Object>, ManagedCacheError>) {
        let continuation = slot.withLock { slot -> CheckedContinuation<ObjectDelivery<Decoder.Object>, any Error>? in
            defer { slot = .finished }
            if case .installed(let continuation) = slot { return continuation }
            return nil
        }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }

    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        managedObjectReady(object, origin: origin, freshness: .current, request: request)
    }

    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest) {
        finish(.success(ObjectDelivery(object: object, origin: origin, freshness: freshness)))
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        finish(.failure(error))
    }

    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        self.progress?(progress)
    }
}

/// The user behind one `deliveryEvents` (or `loadEvents`) stream (managed as an awaiting caller, like `AwaitingUser`).
final class StreamingUser<Decoder: ObjectDecoding>: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder: Decoder
    private let continuation: AsyncThrowingStream<DeliveryEvent<Decoder.Object>, any Error>.Continuation

    init(
        request: ObjectRequest, decoder: Decoder,
        continuation: AsyncThrowingStream<DeliveryEvent<Decoder.Object>, any Error>.Continuation
    ) {
        self.objectRequest = request
        self.objectDecoder = decoder
        self.continuation = continuation
    }

    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        managedObjectReady(object, origin: origin, freshness: .current, request: request)
    }

    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest) {
        continuation.yield(.delivered(ObjectDelivery(object: object, origin: origin, freshness: freshness)))
        continuation.finish()
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        continuation.finish(throwing: error)
    }

    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        continuation.yield(.progress(progress))
    }
}

/// The tasks awaiting an ``ObjectUser``'s delivery (`ObjectUser.delivery()`), under the user's
/// lock: each by a ticket of its own, so a cancelled task takes out its continuation alone.
struct DeliveryWaiters<Object: Sendable>: Sendable {
    typealias Continuation = CheckedContinuation<Result<ObjectDelivery<Object>, ManagedCacheError>, Never>

    /// Continuations taken out under the lock, resumed after it.
    struct Resumption {
        var continuations: [Continuation] = []

        func resume(with answer: Result<ObjectDelivery<Object>, ManagedCacheError>) {
            for continuation in continuations { continuation.resume(returning: answer) }
        }
    }

    private var nextTicket: UInt64 = 0
    private var waiting: [UInt64: Continuation] = [:]

    var count: Int { waiting.count }

    mutating func makeTicket() -> UInt64 {
        nextTicket += 1
        return nextTicket
    }

    mutating func add(_ ticket: UInt64, _ continuation: Continuation) {
        waiting[ticket] = continuation
    }

    /// The continuation of `ticket`, if it still waits (its task was cancelled).
    mutating func remove(_ ticket: UInt64) -> Continuation? {
        waiting.removeValue(forKey: ticket)
    }

    /// Every waiting continuation: the request was answered or replaced.
    mutating func removeAll() -> Resumption {
        defer { waiting.removeAll() }
        return Resumption(continuations: Array(waiting.values))
    }
}
