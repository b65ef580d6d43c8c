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
/// `@MainActor` and run on the main queue, for code that updates views. Their `onDelivery` forms
/// (``init(request:decoder:onDelivery:onFailure:onProgress:)``,
/// ``onMainActor(request:decoder:onDelivery:onFailure:onProgress:)``) are told the object's
/// freshness too. Plain `async` code awaits ``delivery()`` instead of passing closures.
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
        /// The tasks awaiting ``delivery()``: resumed by the current request's outcome, or with
        /// `.cancelled(.caller)` when the request changes or their task is cancelled.
        var waiters = DeliveryWaiters<Decoder.Object>()
    }

    /// The closures, and where they run.
    private enum Callbacks: Sendable {
        case anyThread(
            ready: (@Sendable (ObjectDelivery<Decoder.Object>) -> Void)?,
            failure: (@Sendable (ManagedCacheError) -> Void)?,
            progress: (@Sendable (LoadProgress) -> Void)?)
        case mainActor(
            ready: (@MainActor @Sendable (ObjectDelivery<Decoder.Object>) -> Void)?,
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
    public convenience init(
        request: ObjectRequest? = nil, decoder: Decoder,
        onReady: (@Sendable (Decoder.Object, DataOrigin) -> Void)? = nil,
        onFailure: (@Sendable (ManagedCacheError) -> Void)? = nil,
        onProgress: (@Sendable (LoadProgress) -> Void)? = nil
    ) {
        self.init(
            request: request, decoder: decoder, delivery: .immediate,
            callbacks: .anyThread(ready: onReady.map(Self.toldObjectAndOrigin), failure: onFailure, progress: onProgress))
    }

    /// Creates a user whose closures run on whichever thread finished the work, told each
    /// delivery whole: the object, its origin and its freshness (an expired copy shown offline
    /// arrives `.stale`, with the failure).
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager) and `feedURL` (a URL).
    /// let feedUser = ObjectUser(request: ObjectRequest(url: feedURL), decoder: DataDecoder(), onDelivery: { delivery in
    ///     print("\(delivery.object.count) bytes from \(delivery.origin), \(delivery.freshness)")
    /// })
    /// manager.manage(feedUser)
    /// ```
    ///
    /// - Parameters:
    ///   - request: The first request to load. Default `nil`: set ``request`` before managing.
    ///   - decoder: How to decode the bytes.
    ///   - onDelivery: Called with the shared object, where it came from and whether it is current.
    ///   - onFailure: Called with the reason the current request failed or was cancelled. Default `nil`.
    ///   - onProgress: Called as bytes of the current request arrive. Default `nil`.
    public convenience init(
        request: ObjectRequest? = nil, decoder: Decoder,
        onDelivery: @escaping @Sendable (ObjectDelivery<Decoder.Object>) -> Void,
        onFailure: (@Sendable (ManagedCacheError) -> Void)? = nil,
        onProgress: (@Sendable (LoadProgress) -> Void)? = nil
    ) {
        self.init(
            request: request, decoder: decoder, delivery: .immediate,
            callbacks: .anyThread(ready: onDelivery, failure: onFailure, progress: onProgress))
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
            callbacks: .mainActor(ready: onReady.map(Self.toldObjectAndOriginOnMainActor), failure: onFailure, progress: onProgress))
    }

    /// Creates a user whose closures run on the main actor, told each delivery whole: the
    /// object, its origin and its freshness, so a view can say "may be out of date".
    ///
    /// - Parameters:
    ///   - request: The first request to load. Default `nil`: set ``request`` before managing.
    ///   - decoder: How to decode the bytes.
    ///   - onDelivery: Called on the main actor with the shared object, where it came from and
    ///     whether it is current.
    ///   - onFailure: Called on the main actor when the current request fails or is cancelled. Default `nil`.
    ///   - onProgress: Called on the main actor as bytes of the current request arrive. Default `nil`.
    /// - Returns: A user whose ``callbackDelivery`` is ``CallbackDelivery/mainQueue``.
    public static func onMainActor(
        request: ObjectRequest? = nil, decoder: Decoder,
        onDelivery: @escaping @MainActor @Sendable (ObjectDelivery<Decoder.Object>) -> Void,
        onFailure: (@MainActor @Sendable (ManagedCacheError) -> Void)? = nil,
        onProgress: (@MainActor @Sendable (LoadProgress) -> Void)? = nil
    ) -> ObjectUser {
        ObjectUser(
            request: request, decoder: decoder, delivery: .mainQueue,
            callbacks: .mainActor(ready: onDelivery, failure: onFailure, progress: onProgress))
    }

    /// How many tasks wait in ``delivery()`` (for tests).
    var pendingDeliveryWaiters: Int { state.withLock { $0.waiters.count } }

    /// An `onReady` of the forms told the object and its origin, called with a whole delivery.
    private static func toldObjectAndOrigin(
        _ ready: @escaping @Sendable (Decoder.Object, DataOrigin) -> Void
    ) -> @Sendable (ObjectDelivery<Decoder.Object>) -> Void {
        { delivery in ready(delivery.object, delivery.origin) }
    }

    /// The main-actor `onReady` of the forms told the object and its origin, called with a whole delivery.
    private static func toldObjectAndOriginOnMainActor(
        _ ready: @escaping @MainActor @Sendable (Decoder.Object, DataOrigin) -> Void
    ) -> @MainActor @Sendable (ObjectDelivery<Decoder.Object>) -> Void {
        { delivery in ready(delivery.object, delivery.origin) }
    }

    private init(request: ObjectRequest?, decoder: Decoder, delivery: CallbackDelivery, callbacks: Callbacks) {
        self.objectDecoder = decoder
        self.callbackDelivery = delivery
        self.state = Lock(State(request: request))
        self.callbacks = callbacks
    }

    /// The request the next `manage` call loads. Changing it clears the current object (and
    /// ends a wait in ``delivery()`` for the previous request with `.cancelled(.caller)`).
    public var request: ObjectRequest? {
        get { state.withLock { $0.request } }
        set {
            let replaced = state.withLock { state in
                state.request = newValue
                state.phase = .idle
                state.freshness = .current
                return state.waiters.removeAll()
            }
            replaced.resume(with: .failure(.cancelled(.caller)))
        }
    }

    /// Waits for the current request's object, with its origin and freshness: at once when it
    /// is ready (or has failed), else until the manager delivers it. The `async` way to use a
    /// user shared with other code, without a continuation, a lock or a callback of your own.
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager) and `feedURL` (a URL).
    /// let feedUser = ObjectUser(request: ObjectRequest(url: feedURL), decoder: DataDecoder())
    /// manager.manage(feedUser)
    /// let delivery = try await feedUser.delivery()
    /// print("\(delivery.object.count) bytes, \(delivery.freshness)")
    /// ```
    ///
    /// A stale object shown while it is revalidated (``LoadPolicy/staleWhileRevalidate``) is
    /// returned as it is, `.stale(revalidationError: nil)`; a newer one, if the server has it,
    /// replaces it in ``phase`` and reaches `onReady` / `onDelivery`. A request that failed is
    /// answered with its failure until a later answer to it (a retry's) replaces that.
    ///
    /// - Returns: The object of the current request, where it came from and whether it is current.
    /// - Throws: The current request's ``ManagedCacheError``; ``ManagedCacheError/cancelled(_:)``
    ///   with ``ManagedCacheError/CancellationReason/caller`` when the calling task is cancelled
    ///   or ``request`` changes meanwhile; ``ManagedCacheError/invalidRequest(reason:)`` when the
    ///   user has no request.
    public func delivery() async throws(ManagedCacheError) -> ObjectDelivery<Decoder.Object> {
        let ticket = state.withLock { $0.waiters.makeTicket() }
        typealias Answer = Result<ObjectDelivery<Decoder.Object>, ManagedCacheError>
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
                let answer = state.withLock { state -> Answer? in
                    switch state.phase {
                    case .ready(let object, let origin):
                        return .success(ObjectDelivery(object: object, origin: origin, freshness: state.freshness))
                    case .failed(let error):
                        return .failure(error)
                    case .idle where state.request == nil:
                        return .failure(.invalidRequest(reason: "the user has no request"))
                    case .idle, .loading:
                        // Checked under the lock: a cancellation handler that ran before this
                        // found no waiter, but the task was already marked cancelled.
                        if Task.isCancelled { return .failure(.cancelled(.caller)) }
                        state.waiters.add(ticket, continuation)
                        return nil
                    }
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            state.withLock { $0.waiters.remove(ticket) }?.resume(returning: .failure(.cancelled(.caller)))
        }
        return try result.get()
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
        let delivery = ObjectDelivery(object: object, origin: origin, freshness: freshness)
        guard update(for: request, to: .ready(object, origin), freshness: freshness, answering: .success(delivery)) else { return }
        switch callbacks {
        case .anyThread(let ready, _, _): ready?(delivery)
        case .mainActor(let ready, _, _): MainActor.assumeIsolated { ready?(delivery) }
        }
    }

    /// Records the failure as ``phase`` and calls `onFailure`, unless `request` is no longer the
    /// current one.
    ///
    /// - Parameters:
    ///   - error: Why the request failed or was cancelled.
    ///   - request: The request it answers.
    public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        guard update(for: request, to: .failed(error), answering: .failure(error)) else { return }
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

    /// Moves to `phase` if `request` is still the current one; tells whether it was. A final
    /// outcome (`answer`) resumes the tasks awaiting ``delivery()``, after the lock.
    private func update(
        for request: ObjectRequest, to phase: Phase, freshness: ObjectFreshness = .current,
        answering answer: Result<ObjectDelivery<Decoder.Object>, ManagedCacheError>? = nil
    ) -> Bool {
        let answered = state.withLock { state -> DeliveryWaiters<Decoder.Object>.Resumption? in
            guard state.request == request else { return nil }
            state.phase = phase
            state.freshness = freshness
            return answer == nil ? DeliveryWaiters.Resumption() : state.waiters.removeAll()
        }
        guard let answered else { return false }
        if let answer { answered.resume(with: answer) }
        return true
    }
}
