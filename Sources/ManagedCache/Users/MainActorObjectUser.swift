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
/// import ManagedCacheUIKit
/// import UIKit
///
/// @MainActor final class AvatarCell: UITableViewCell, MainActorObjectUser {
///     let avatarView = UIImageView()
///     var objectRequest: ObjectRequest?
///     let objectDecoder = ImageDecoder()
///     func managedObjectReady(_ image: DecodedImage, origin: DataOrigin, request: ObjectRequest) {
///         avatarView.image = image.uiImage()
///     }
///     func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { avatarView.image = nil }
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

    /// The shared object is ready, on the main actor: the final callback of a successful
    /// `manage`, called again when a revalidation brings a newer object.
    ///
    /// - Parameters:
    ///   - object: The object every user of the key shares.
    ///   - origin: Where it came from.
    ///   - request: The request the user was last managed with, which this answers.
    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest)
    /// The shared object is ready, on the main actor, with whether it is known to be current: implement
    /// this one as well to tell people when what they see may be out of date (shown while it is
    /// revalidated, or because the network failed: see ``ObjectFreshness``). Optional: the
    /// default calls ``managedObjectReady(_:origin:request:)``, which stays the one to implement
    /// otherwise.
    ///
    /// - Parameters:
    ///   - object: The object every user of the key shares.
    ///   - origin: Where it came from.
    ///   - freshness: `.current`, or `.stale` with why it could not be revalidated.
    ///   - request: The request the user was managed with, which this answers.
    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest)
    /// Loading failed or was cancelled, on the main actor: the final callback of an unsuccessful
    /// `manage`. The user is detached; manage it again to retry.
    ///
    /// - Parameters:
    ///   - error: Why.
    ///   - request: The request the user was managed with.
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest)
    /// Bytes arrived, on the main actor. Optional: the default ignores progress.
    ///
    /// - Parameters:
    ///   - progress: The bytes received so far, and the announced total.
    ///   - request: The request the user was managed with.
    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest)

    /// Whether this user wants previews of its object while it downloads (a progressive JPEG's
    /// first scans), read on the main actor by each `manage`. Default `false`.
    var wantsPreviews: Bool { get }
    /// A preview of the object for `request` while the download goes on (see
    /// `ManagedObjectUser.managedObjectPreview(_:request:)`): at most every
    /// `ObjectManager.Configuration.previewInterval`, never after the final callback, never cached
    /// or shared with users that did not ask. Default: ignored.
    ///
    /// - Parameters:
    ///   - preview: A preview made from the bytes that have arrived; not the object itself.
    ///   - request: The request the user was managed with.
    func managedObjectPreview(_ preview: Decoder.Object, request: ObjectRequest)
}

extension MainActorObjectUser {
    /// Calls ``managedObjectReady(_:origin:request:)``: freshness is ignored.
    ///
    /// - Parameters:
    ///   - object: The shared object.
    ///   - origin: Where it came from.
    ///   - freshness: Whether it is known to be current (ignored).
    ///   - request: The request it answers.
    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest) {
        managedObjectReady(object, origin: origin, request: request)
    }
    /// Ignores progress.
    ///
    /// - Parameters:
    ///   - progress: The bytes received so far.
    ///   - request: The request they belong to.
    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {}
    /// `false`: previews are not wanted.
    public var wantsPreviews: Bool { false }
    /// Ignores the preview.
    ///
    /// - Parameters:
    ///   - preview: A preview made from the bytes that have arrived; not the object itself.
    ///   - request: The request the user was managed with.
    public func managedObjectPreview(_ preview: Decoder.Object, request: ObjectRequest) {}
}

/// The link to a `MainActorObjectUser`: always delivered on the main queue.
final class MainActorUserLink<User: MainActorObjectUser>: UserLink {
    weak let user: User?
    let userID: ObjectIdentifier
    var delivery: CallbackDelivery { .mainQueue }
    let wantsPreviews: Bool

    /// `wantsPreviews` is read from the user on the main actor, by `manage`.
    init(_ user: User, wantsPreviews: Bool) {
        self.user = user
        userID = ObjectIdentifier(user)
        self.wantsPreviews = wantsPreviews
    }

    var isAlive: Bool { MainQueueRelease.isAlive(user, delivery: .mainQueue) }

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
        event.route(
            as: Decoder.Object.self, ready: { managedObjectReady($0, origin: $1, freshness: $2, request: request) },
            failed: { managedObjectFailed($0, request: request) }, progress: { managedObjectProgress($0, request: request) },
            preview: { managedObjectPreview($0, request: request) })
    }

    /// `receive(.ready(object, .memory), request:)` without making the event (see
    /// `ManagedObjectUser.receiveMemoryHit`).
    func receiveMemoryHit(_ object: any Sendable, request: ObjectRequest) {
        pass(
            object, as: Decoder.Object.self, to: { managedObjectReady($0, origin: .memory, freshness: .current, request: request) },
            otherwise: { managedObjectFailed($0, request: request) })
    }
}
