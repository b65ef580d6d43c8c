import Foundation

/// A user that lives on the main actor: a view controller, a table or collection view cell, an
/// observable view model. Pass it to `ObjectManager.manage(_:)` from the main actor.
///
/// Everything it declares is main-actor isolated, so a `@MainActor` class with mutable state
/// conforms as it is, with no `@unchecked Sendable`, `@preconcurrency` or `nonisolated`:
/// `objectRequest` and `objectDecoder` are read on the main actor when `manage` is called, and the
/// callbacks run on the main actor. Otherwise it gets what every `ManagedObjectUser` gets: one
/// object shared with every user of its key, weak holding (a released user is never called, even
/// by a delivery already queued), the loading buffer's cancellation, progress, failure memory.
///
/// A memory hit is delivered synchronously, before `manage` returns (no placeholder flash);
/// everything else arrives on the main actor as soon as it can.
///
/// ```swift
/// @MainActor final class AvatarCell: UITableViewCell, MainActorObjectUser {
///     var objectRequest: ObjectRequest?
///     let objectDecoder = ImageDecoder()
///     func managedObjectReady(_ image: DecodedImage, origin: DataOrigin, request: ObjectRequest) { show(image) }
///     func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { showFailure() }
/// }
/// ```
@MainActor
public protocol MainActorObjectUser: AnyObject, Sendable {
    /// The decoder that turns bytes into this user's object type.
    associatedtype Decoder: ObjectDecoding

    /// What to load. Read on the main actor by each `manage` call; `nil` detaches the user.
    var objectRequest: ObjectRequest? { get }
    /// How to decode the bytes, read on the main actor by each `manage` call. Its `identifier`
    /// is part of the key.
    var objectDecoder: Decoder { get }

    /// The shared object for `request` (the request the user was last managed with) is ready.
    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest)
    /// Loading `request` failed, or was cancelled; `error` says why.
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest)
    /// Bytes arrived for `request`. Default: ignored.
    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest)
}

extension MainActorObjectUser {
    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {}
}

/// The link to a `MainActorObjectUser`: always delivered on the main queue.
final class MainActorUserLink<User: MainActorObjectUser>: UserLink {
    weak let user: User?
    let userID: ObjectIdentifier
    var delivery: CallbackDelivery { .mainQueue }

    init(_ user: User) {
        self.user = user
        userID = ObjectIdentifier(user)
    }

    var isAlive: Bool { user != nil }

    func deliver(_ event: UserEvent, request: ObjectRequest) {
        // The manager calls a `.mainQueue` link only on the main queue (`MainQueue.isCurrent`, or
        // a block it queued there), where the main actor runs.
        MainActor.assumeIsolated {
            user?.receive(event, request: request)
        }
    }
}

extension MainActorObjectUser {
    /// Calls the callback matching `event`, with the object cast to this user's type.
    func receive(_ event: UserEvent, request: ObjectRequest) {
        switch event {
        case .ready(let object, let origin):
            if let object = object as? Decoder.Object {
                managedObjectReady(object, origin: origin, request: request)
            } else {
                managedObjectFailed(.decodingFailed(reason: "the shared object is a \(type(of: object)), not a \(Decoder.Object.self)"), request: request)
            }
        case .failed(let error):
            managedObjectFailed(error, request: request)
        case .progress(let progress):
            managedObjectProgress(progress, request: request)
        }
    }
}
