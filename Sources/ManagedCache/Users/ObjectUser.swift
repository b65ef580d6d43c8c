import Foundation
import ManagedCacheLocking

/// A ready-made `ManagedObjectUser` that holds its request and the current object and calls
/// closures: HJCache's `HJMOUserBase`, for code that does not want to write a user class.
///
/// Keep a strong reference to it for as long as you want the object: the manager holds it weakly.
/// Setting `request` does not load; call `ObjectManager.manage(_:)` after changing it. Callbacks for
/// a request other than the current one are dropped, so a reused user never sees an old object.
///
/// ```swift
/// let user = ObjectUser(decoder: JSONObjectDecoder<Feed>()) { feed in show(feed) }
/// user.request = ObjectRequest(url: feedURL)
/// manager.manage(user)
/// ```
public final class ObjectUser<Decoder: ObjectDecoding>: ManagedObjectUser {
    /// What a user holds right now.
    public enum Phase: Sendable {
        /// No request, or not managed yet.
        case idle
        /// Waiting for the object of the current request.
        case loading(LoadProgress?)
        /// The shared object of the current request.
        case ready(Decoder.Object, DataOrigin)
        /// The current request failed.
        case failed(ManagedCacheError)
    }

    private struct State {
        var request: ObjectRequest?
        var phase: Phase = .idle
    }

    /// Turns the downloaded bytes into the object this user shows.
    public let objectDecoder: Decoder
    /// Where the callbacks run (given at init; `.immediate` by default).
    public let callbackDelivery: CallbackDelivery
    private let state: Lock<State>
    private let onReady: (@Sendable (Decoder.Object, DataOrigin) -> Void)?
    private let onFailure: (@Sendable (ManagedCacheError) -> Void)?
    private let onProgress: (@Sendable (LoadProgress) -> Void)?

    /// Creates a user with `decoder`, an optional first request and the closures to call.
    /// A trailing closure is `onReady`: `ObjectUser(request: r, decoder: d) { object, origin in … }`.
    public init(
        request: ObjectRequest? = nil, decoder: Decoder, delivery: CallbackDelivery = .immediate,
        onReady: (@Sendable (Decoder.Object, DataOrigin) -> Void)? = nil,
        onFailure: (@Sendable (ManagedCacheError) -> Void)? = nil,
        onProgress: (@Sendable (LoadProgress) -> Void)? = nil
    ) {
        self.objectDecoder = decoder
        self.callbackDelivery = delivery
        self.state = Lock(State(request: request))
        self.onReady = onReady
        self.onFailure = onFailure
        self.onProgress = onProgress
    }

    /// The request the next `manage` call loads. Changing it clears the current object.
    public var request: ObjectRequest? {
        get { state.withLock { $0.request } }
        set { state.withLock { $0 = State(request: newValue) } }
    }

    /// The current phase: idle, loading, ready with the object, or failed.
    public var phase: Phase { state.withLock { $0.phase } }

    /// The shared object, once ready.
    public var object: Decoder.Object? {
        if case .ready(let object, _) = phase { return object }
        return nil
    }

    public var objectRequest: ObjectRequest? {
        state.withLock { state in
            if state.request != nil, case .idle = state.phase { state.phase = .loading(nil) }
            return state.request
        }
    }

    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        guard update(for: request, to: .ready(object, origin)) else { return }
        onReady?(object, origin)
    }

    public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        guard update(for: request, to: .failed(error)) else { return }
        onFailure?(error)
    }

    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        guard update(for: request, to: .loading(progress)) else { return }
        onProgress?(progress)
    }

    /// Moves to `phase` if `request` is still the current one; tells whether it was.
    private func update(for request: ObjectRequest, to phase: Phase) -> Bool {
        state.withLock { state in
            guard state.request == request else { return false }
            state.phase = phase
            return true
        }
    }
}
