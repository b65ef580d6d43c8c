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
/// let user = ObjectUser(decoder: JSONObjectDecoder<Feed>()) { feed, _ in store(feed) }   // any thread
/// user.request = ObjectRequest(url: feedURL)
/// manager.manage(user)
///
/// let avatar = ObjectUser.onMainActor(decoder: ImageDecoder()) { image, _ in imageView.image = image }
/// ```
///
/// `init` makes a user whose closures run on whichever thread finished the work (`.immediate`);
/// `onMainActor(…)` makes one whose closures are `@MainActor` and run on the main queue.
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

    /// The closures, and where they run.
    private enum Callbacks: Sendable {
        case anyThread(
            ready: (@Sendable (Decoder.Object, DataOrigin) -> Void)?,
            failure: (@Sendable (ManagedCacheError) -> Void)?,
            progress: (@Sendable (LoadProgress) -> Void)?)
        case mainActor(
            ready: (@MainActor @Sendable (Decoder.Object, DataOrigin) -> Void)?,
            failure: (@MainActor @Sendable (ManagedCacheError) -> Void)?,
            progress: (@MainActor @Sendable (LoadProgress) -> Void)?)
    }

    /// Turns the downloaded bytes into the object this user shows.
    public let objectDecoder: Decoder
    /// Where the callbacks run: `.immediate` for `init`, `.mainQueue` for `onMainActor(…)`.
    public let callbackDelivery: CallbackDelivery
    private let state: Lock<State>
    private let callbacks: Callbacks

    /// Creates a user with `decoder`, an optional first request and the closures to call, on
    /// whichever thread finished the work. A trailing closure is `onReady`:
    /// `ObjectUser(request: r, decoder: d) { object, origin in … }`. For UI code, use
    /// `onMainActor(request:decoder:onReady:onFailure:onProgress:)`.
    public init(
        request: ObjectRequest? = nil, decoder: Decoder,
        onReady: (@Sendable (Decoder.Object, DataOrigin) -> Void)? = nil,
        onFailure: (@Sendable (ManagedCacheError) -> Void)? = nil,
        onProgress: (@Sendable (LoadProgress) -> Void)? = nil
    ) {
        self.objectDecoder = decoder
        self.callbackDelivery = .immediate
        self.state = Lock(State(request: request))
        self.callbacks = .anyThread(ready: onReady, failure: onFailure, progress: onProgress)
    }

    /// Creates a user whose closures run on the main actor (its `callbackDelivery` is
    /// `.mainQueue`): they can touch views and other main-actor state. A memory hit managed on
    /// the main actor is delivered before `manage` returns.
    ///
    /// ```swift
    /// let avatar = ObjectUser.onMainActor(request: r, decoder: ImageDecoder()) { image, _ in imageView.image = image }
    /// ```
    public static func onMainActor(
        request: ObjectRequest? = nil, decoder: Decoder,
        onReady: (@MainActor @Sendable (Decoder.Object, DataOrigin) -> Void)? = nil,
        onFailure: (@MainActor @Sendable (ManagedCacheError) -> Void)? = nil,
        onProgress: (@MainActor @Sendable (LoadProgress) -> Void)? = nil
    ) -> ObjectUser {
        ObjectUser(request: request, decoder: decoder, delivery: .mainQueue,
                   callbacks: .mainActor(ready: onReady, failure: onFailure, progress: onProgress))
    }

    private init(request: ObjectRequest?, decoder: Decoder, delivery: CallbackDelivery, callbacks: Callbacks) {
        self.objectDecoder = decoder
        self.callbackDelivery = delivery
        self.state = Lock(State(request: request))
        self.callbacks = callbacks
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

    // The manager calls these on the thread `callbackDelivery` names: for `onMainActor(…)` users,
    // the main queue, where the main actor runs.

    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        guard update(for: request, to: .ready(object, origin)) else { return }
        switch callbacks {
        case .anyThread(let ready, _, _): ready?(object, origin)
        case .mainActor(let ready, _, _): MainActor.assumeIsolated { ready?(object, origin) }
        }
    }

    public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        guard update(for: request, to: .failed(error)) else { return }
        switch callbacks {
        case .anyThread(_, let failure, _): failure?(error)
        case .mainActor(_, let failure, _): MainActor.assumeIsolated { failure?(error) }
        }
    }

    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        guard update(for: request, to: .loading(progress)) else { return }
        switch callbacks {
        case .anyThread(_, _, let progressHandler): progressHandler?(progress)
        case .mainActor(_, _, let progressHandler): MainActor.assumeIsolated { progressHandler?(progress) }
        }
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
