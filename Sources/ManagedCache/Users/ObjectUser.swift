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
/// struct Feed: Decodable, Sendable { var title: String }
///
/// let manager = ObjectManager()
/// let user = ObjectUser(decoder: JSONObjectDecoder<Feed>()) { feed, origin in  // on any thread
///     print("\(feed.title), from \(origin)")
/// }
/// user.request = ObjectRequest(url: URL(string: "https://example.com/feed.json")!)
/// manager.manage(user)  // keep `user` alive until it is done: the manager holds it weakly
/// ```
///
/// ``init(request:decoder:onReady:onFailure:onProgress:)`` makes a user whose closures run on
/// whichever thread finished the work (``CallbackDelivery/immediate``);
/// ``onMainActor(request:decoder:onReady:onFailure:onProgress:)`` makes one whose closures are
/// `@MainActor` and run on the main queue, for code that updates views.
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
        var freshness = ObjectFreshness.current
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

    /// Creates a user whose closures run on whichever thread finished the work. A trailing
    /// closure is `onReady`: `ObjectUser(request: r, decoder: d) { object, origin in … }`. For UI
    /// code, use ``onMainActor(request:decoder:onReady:onFailure:onProgress:)``.
    ///
    /// - Parameters:
    ///   - request: The first request to load. Default `nil`: set ``request`` before managing.
    ///   - decoder: How to decode the bytes.
    ///   - onReady: Called with the shared object and where it came from. Default `nil`.
    ///   - onFailure: Called with the reason the current request failed or was cancelled. Default `nil`.
    ///   - onProgress: Called as bytes of the current request arrive. Default `nil`.
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
    /// @MainActor final class NoteController {
    ///     var text = ""
    ///     lazy var note = ObjectUser.onMainActor(decoder: DataDecoder()) { [weak self] data, _ in
    ///         self?.text = String(decoding: data, as: UTF8.self)  // main-actor state, no lock
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The first request to load. Default `nil`: set ``request`` before managing.
    ///   - decoder: How to decode the bytes.
    ///   - onReady: Called on the main actor with the shared object and where it came from. Default `nil`.
    ///   - onFailure: Called on the main actor when the current request fails or is cancelled. Default `nil`.
    ///   - onProgress: Called on the main actor as bytes of the current request arrive. Default `nil`.
    /// - Returns: A user whose ``callbackDelivery`` is ``CallbackDelivery/mainQueue``.
    public static func onMainActor(
        request: ObjectRequest? = nil, decoder: Decoder,
        onReady: (@MainActor @Sendable (Decoder.Object, DataOrigin) -> Void)? = nil,
        onFailure: (@MainActor @Sendable (ManagedCacheError) -> Void)? = nil,
        onProgress: (@MainActor @Sendable (LoadProgress) -> Void)? = nil
    ) -> ObjectUser {
        ObjectUser(
            request: request, decoder: decoder, delivery: .mainQueue,
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

    /// Whether the ready object is known to be current: `.stale` when it is shown past its
    /// freshness (while it is revalidated, or because revalidating it failed: see
    /// ``ObjectFreshness``). `.current` in every other phase.
    public var freshness: ObjectFreshness {
        state.withLock { state in
            if case .ready = state.phase { return state.freshness }
            return .current
        }
    }

    /// The shared object, once ready.
    public var object: Decoder.Object? {
        if case .ready(let object, _) = phase { return object }
        return nil
    }

    /// The current ``request``, which the manager reads at each `manage`; reading it moves an idle
    /// user to loading.
    public var objectRequest: ObjectRequest? {
        state.withLock { state in
            if state.request != nil, case .idle = state.phase { state.phase = .loading(nil) }
            return state.request
        }
    }

    // The manager calls these on the thread `callbackDelivery` names: for `onMainActor(…)` users,
    // the main queue, where the main actor runs.

    /// Keeps the object as ``phase`` and calls `onReady`, unless `request` is no longer the
    /// current one (then it does nothing).
    ///
    /// - Parameters:
    ///   - object: The shared object.
    ///   - origin: Where it came from.
    ///   - request: The request it answers.
    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest) {
        managedObjectReady(object, origin: origin, freshness: .current, request: request)
    }

    /// Keeps the object as ``phase`` and its ``freshness``, and calls `onReady`, unless `request`
    /// is no longer the current one (then it does nothing).
    ///
    /// - Parameters:
    ///   - object: The shared object.
    ///   - origin: Where it came from.
    ///   - freshness: Whether it is known to be current.
    ///   - request: The request it answers.
    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest) {
        guard update(for: request, to: .ready(object, origin), freshness: freshness) else { return }
        switch callbacks {
        case .anyThread(let ready, _, _): ready?(object, origin)
        case .mainActor(let ready, _, _): MainActor.assumeIsolated { ready?(object, origin) }
        }
    }

    /// Records the failure as ``phase`` and calls `onFailure`, unless `request` is no longer the
    /// current one.
    ///
    /// - Parameters:
    ///   - error: Why the request failed or was cancelled.
    ///   - request: The request it answers.
    public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        guard update(for: request, to: .failed(error)) else { return }
        switch callbacks {
        case .anyThread(_, let failure, _): failure?(error)
        case .mainActor(_, let failure, _): MainActor.assumeIsolated { failure?(error) }
        }
    }

    /// Records the progress in ``phase`` and calls `onProgress`, unless `request` is no longer the
    /// current one.
    ///
    /// - Parameters:
    ///   - progress: The bytes received so far.
    ///   - request: The request they belong to.
    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        guard update(for: request, to: .loading(progress)) else { return }
        switch callbacks {
        case .anyThread(_, _, let progressHandler): progressHandler?(progress)
        case .mainActor(_, _, let progressHandler): MainActor.assumeIsolated { progressHandler?(progress) }
        }
    }

    /// Moves to `phase` if `request` is still the current one; tells whether it was.
    private func update(for request: ObjectRequest, to phase: Phase, freshness: ObjectFreshness = .current) -> Bool {
        state.withLock { state in
            guard state.request == request else { return false }
            state.phase = phase
            state.freshness = freshness
            return true
        }
    }
}
