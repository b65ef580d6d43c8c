import Foundation
import ManagedCache
import ManagedCacheLocking

/// A `ManagedObjectUser` that records every callback, for tests to assert on.
public final class RecordingUser<Decoder: ObjectDecoding>: ManagedObjectUser {
    /// One recorded callback.
    public enum Event: Sendable {
        case ready(Decoder.Object, DataOrigin, ObjectRequest)
        case failed(ManagedCacheError, ObjectRequest)
        case progress(LoadProgress)
    }

    private let requestSlot: Lock<ObjectRequest?>
    private let recorded = Lock<[Event]>([])
    private let onMainThread = Lock<[Bool]>([])
    private let readyFreshness = Lock<[ObjectFreshness]>([])
    public let objectDecoder: Decoder
    public let callbackDelivery: CallbackDelivery
    /// Called on every `ready`, after recording it.
    private let onReady: (@Sendable (Decoder.Object) -> Void)?

    /// Creates a user for `request` (which can be changed later for reuse).
    public init(
        _ request: ObjectRequest?, decoder: Decoder, delivery: CallbackDelivery = .immediate,
        onReady: (@Sendable (Decoder.Object) -> Void)? = nil
    ) {
        requestSlot = Lock(request)
        objectDecoder = decoder
        callbackDelivery = delivery
        self.onReady = onReady
    }

    public var objectRequest: ObjectRequest? { requestSlot.withLock { $0 } }

    /// Points the user at another request (cell reuse); call `manage` afterwards.
    public func setRequest(_ request: ObjectRequest?) { requestSlot.withLock { $0 = request } }

    /// Records the freshness, then the object as the three-argument callback does.
    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest) {
        readyFreshness.withLock { $0.append(freshness) }
        managedObjectReady(object, origin: origin, request: request)
    }

    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        onMainThread.withLock { $0.append(MainQueueMarker.isOnMainQueue) }
        recorded.withLock { $0.append(.ready(object, origin, request)) }
        onReady?(object)
    }

    public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        onMainThread.withLock { $0.append(MainQueueMarker.isOnMainQueue) }
        recorded.withLock { $0.append(.failed(error, request)) }
    }

    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        onMainThread.withLock { $0.append(MainQueueMarker.isOnMainQueue) }
        recorded.withLock { $0.append(.progress(progress)) }
    }

    /// For every callback so far, whether it ran on the main queue.
    public var callbacksOnMainQueue: [Bool] { onMainThread.withLock { $0 } }

    /// Every callback so far, in order.
    public var events: [Event] { recorded.withLock { $0 } }

    /// The objects delivered, in order.
    public var objects: [Decoder.Object] {
        events.compactMap { if case .ready(let object, _, _) = $0 { return object } else { return nil } }
    }

    /// The origins of the objects delivered, in order.
    public var origins: [DataOrigin] {
        events.compactMap { if case .ready(_, let origin, _) = $0 { return origin } else { return nil } }
    }

    /// The freshness the objects were delivered with, in order.
    public var freshnesses: [ObjectFreshness] { readyFreshness.withLock { $0 } }

    /// The requests the objects were delivered for, in order.
    public var readyRequests: [ObjectRequest] {
        events.compactMap { if case .ready(_, _, let request) = $0 { return request } else { return nil } }
    }

    /// The errors delivered, in order.
    public var errors: [ManagedCacheError] {
        events.compactMap { if case .failed(let error, _) = $0 { return error } else { return nil } }
    }

    /// Progress values delivered, in order.
    public var progress: [LoadProgress] {
        events.compactMap { if case .progress(let progress) = $0 { return progress } else { return nil } }
    }

    /// `ready` plus `failed` callbacks: a request's final outcomes.
    public var finalCallbackCount: Int {
        events.reduce(0) { count, event in
            if case .progress = event { return count }
            return count + 1
        }
    }
}

/// Tells whether code runs on the main dispatch queue. (Under `swift test` on Linux the main queue
/// is drained by a thread that `Thread.isMainThread` does not recognise, so a queue-specific key is
/// the reliable check.)
public enum MainQueueMarker {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the caller runs on the main queue.
    public static var isOnMainQueue: Bool { DispatchQueue.getSpecific(key: key) == true }
}
