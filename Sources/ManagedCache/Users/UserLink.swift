import Foundation
import ManagedCacheLocking

/// How the manager reaches one user: it holds the user **weakly**, remembers who it is and where
/// its callbacks run, and calls it. The manager's tables and every delivery in flight (including
/// one queued on the main queue) hold the link, never the user, so a user released before its
/// callback runs is not kept alive by the manager and is not called.
///
/// Immutable and `Sendable`: what it remembers was read from the user once, on the thread that
/// called `manage`. A user managed again with another `callbackDelivery` or `wantsPreviews` gets
/// a new link.
protocol UserLink: AnyObject, Sendable {
    /// The user's identity (its table key in the manager), read when it was managed.
    var userID: ObjectIdentifier { get }
    /// Where its callbacks run, read when it was managed.
    var delivery: CallbackDelivery { get }
    /// Whether the user wants previews, read when it was managed.
    var wantsPreviews: Bool { get }
    /// Whether the user is still alive.
    var isAlive: Bool { get }
    /// Calls the user, if it is still alive, with `event` for `request`. The caller runs on a
    /// thread `delivery` allows (the main queue for `.mainQueue`).
    func deliver(_ event: UserEvent, request: ObjectRequest)
}

/// The link to a thread-safe `ManagedObjectUser`.
final class ThreadSafeUserLink<User: ManagedObjectUser>: UserLink {
    weak let user: User?
    let userID: ObjectIdentifier
    let delivery: CallbackDelivery
    let wantsPreviews: Bool

    init(_ user: User, delivery: CallbackDelivery, wantsPreviews: Bool) {
        self.user = user
        userID = ObjectIdentifier(user)
        self.delivery = delivery
        self.wantsPreviews = wantsPreviews
    }

    var isAlive: Bool { MainQueueRelease.isAlive(user, delivery: delivery) }

    func deliver(_ event: UserEvent, request: ObjectRequest) {
        user?.receive(event, request: request)
    }
}

/// Where the last release of a UI user happens. Asking whether a weakly held user is alive loads
/// it strongly for a moment; off the main queue, if the app drops its last reference meanwhile,
/// that moment's release would be the last one and the user (a view) would deinitialise on this
/// thread, under the manager's lock. So a user delivered on the main queue that is found alive
/// off it is kept, and released on the main queue: its last release, whenever it comes, is
/// there. The references kept are released in batches, one block on the main queue per batch.
enum MainQueueRelease {
    private static let kept = Lock<[any AnyObject & Sendable]>([])

    /// Whether `user` is alive; when it is, `delivery` is `.mainQueue` and this is not the main
    /// queue, the strong reference the check took is released on the main queue.
    @inline(__always)
    static func isAlive<User: AnyObject & Sendable>(_ user: @autoclosure () -> User?, delivery: CallbackDelivery) -> Bool {
        guard delivery == .mainQueue, !MainQueue.isCurrent else { return user() != nil }
        guard let alive = user() else { return false }
        keep(alive)
        return true
    }

    /// Keeps `object` until the main queue's next batch.
    static func keep(_ object: any AnyObject & Sendable) {
        let first = kept.withLock { kept in
            kept.append(object)
            return kept.count == 1
        }
        if first { DispatchQueue.main.async { releaseKept() } }
    }

    /// Releases the references kept so far, after the lock (a user's deinit may take time).
    private static func releaseKept() {
        let batch = kept.withLock { kept in
            defer { kept.removeAll() }
            return kept
        }
        withExtendedLifetime(batch) {}
    }

    /// How many references wait for the main queue (for tests).
    static var keptCount: Int { kept.withLock { $0.count } }
}

/// Whether code runs on the main queue, where the main actor's work runs.
enum MainQueue {
    #if !canImport(Darwin)
    /// Marks the main queue. On Linux the main queue may be drained by a thread other than the
    /// process's first one (`dispatchMain`, test runners), which `Thread.isMainThread` does not
    /// recognise, while the main actor runs there.
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()
    #endif

    /// Whether the caller runs on the main queue (on Apple platforms: the main thread).
    static var isCurrent: Bool {
        #if canImport(Darwin)
        Thread.isMainThread
        #else
        DispatchQueue.getSpecific(key: key) == true
        #endif
    }
}

// MARK: - Delivering an event to a user

/// Something that happened to a handler, to be told to one of its users.
enum UserEvent: Sendable {
    /// The object, where it came from, and whether it is known to be current.
    case ready(any Sendable, DataOrigin, ObjectFreshness = .current)
    case failed(ManagedCacheError)
    case progress(LoadProgress)
    /// A preview of the object (only to users that want previews; never cached).
    case preview(any Sendable)
}

/// A callback collected under the manager's lock and made after it is released.
///
/// It holds the user's link, which holds the user weakly: a delivery waiting on a busy main queue
/// keeps no user alive, and a user released meanwhile is not called.
struct PendingDelivery: Sendable {
    let user: any UserLink
    let request: ObjectRequest
    let key: ObjectKey
    /// The attachment the callback is for; a user re-managed since then no longer matches.
    let attachment: UInt64
    /// Where the attachment of the user's record is published (`nil` with `attachment` 0: a
    /// delivery made whatever happens meanwhile).
    let currency: AttachmentCurrency?
    var event: UserEvent
    /// For progress and previews: the fetch it reports on. It is dropped once the user's final
    /// callback has been decided (`AttachmentCurrency`), so no progress follows that callback.
    var fetch: UInt64?

    /// A delivery to the user of `record`, for the request and attachment it holds now (under
    /// the manager's lock): dropped if the user is re-managed or unmanaged before it is made.
    init(to record: Attachment, key: ObjectKey, event: UserEvent, fetch: UInt64? = nil) {
        user = record.link
        request = record.request
        self.key = key
        attachment = record.attachment
        currency = record.currency
        self.event = event
        self.fetch = fetch
    }

    /// A delivery made whatever happens to the user meanwhile (a request refused before any
    /// attachment).
    init(unconditionallyTo user: any UserLink, request: ObjectRequest, key: ObjectKey, event: UserEvent) {
        self.user = user
        self.request = request
        self.key = key
        attachment = 0
        currency = nil
        self.event = event
    }
}

extension UserEvent {
    /// Calls the closure matching the event, with the object cast to `Object`: the one switch
    /// behind every user's `receive` (thread-safe users and main-actor ones alike). A ready object
    /// of another type (two decoders with one identifier) fails with `.decodingFailed`; a preview
    /// of another type is dropped.
    @inline(__always)
    func route<Object>(
        as _: Object.Type, ready: (Object, DataOrigin, ObjectFreshness) -> Void, failed: (ManagedCacheError) -> Void,
        progress: (LoadProgress) -> Void, preview: (Object) -> Void
    ) {
        switch self {
        case .ready(let object, let origin, let freshness):
            pass(object, as: Object.self, to: { ready($0, origin, freshness) }, otherwise: failed)
        case .failed(let error):
            failed(error)
        case .progress(let value):
            progress(value)
        case .preview(let object):
            pass(object, as: Object.self, to: preview, otherwise: { _ in })
        }
    }
}

/// Calls `body` with `value` as an `Object`, or `failed` with `.decodingFailed` when it is not
/// one: without a cast when its type is exactly `Object` (`passIfExactly`), else through the
/// cast kept out of line (`passCasting`).
@inline(__always)
func pass<Object>(
    _ value: any Sendable, as type: Object.Type, to body: (Object) -> Void, otherwise failed: (ManagedCacheError) -> Void
) {
    if passIfExactly(value, as: type, to: body) { return }
    passCasting(value, as: type, to: body, otherwise: failed)
}

/// Calls `body` with `value` cast to `Object` (a subclass's instance, a bridged value), or
/// `failed` with `.decodingFailed` when it is not one (two decoders with one identifier). Kept
/// out of line: inlined, the `Object?` its cast makes cost its metadata lookup on every call,
/// the exact type's too (see `passIfExactly`).
@inline(never)
func passCasting<Object>(
    _ value: any Sendable, as _: Object.Type, to body: (Object) -> Void, otherwise failed: (ManagedCacheError) -> Void
) {
    if let object = value as? Object {
        body(object)
    } else {
        failed(.decodingFailed(reason: "the shared object is a \(type(of: value)), not a \(Object.self)"))
    }
}

/// Calls `body` with `value` when its type is exactly `Object`, and returns whether it did: the
/// common case of `UserEvent.route`'s cast (the object is of the decoder's own type), opened from
/// the existential without a conditional cast. In the generic code of `receive`, `as? Object`
/// made the runtime look up the metadata of `Object?` on every call, which with the cast itself
/// was an eighth of a memory hit's instructions (`manage-hit`); here the check compares two
/// metatypes, and the value is reinterpreted without the runtime: `as!` between one type and
/// itself still called its cast (a sixtieth of a hit). The reinterpretation is safe because
/// the two types are one type, checked just before: same layout, same ownership.
@inline(__always)
func passIfExactly<Value, Object>(_ value: Value, as _: Object.Type, to body: (Object) -> Void) -> Bool {
    guard Value.self == Object.self else { return false }
    body(unsafeBitCast(value, to: Object.self))
    return true
}

extension ManagedObjectUser {
    /// Calls the callback matching `event`, with the object cast to this user's type.
    func receive(_ event: UserEvent, request: ObjectRequest) {
        event.route(
            as: Decoder.Object.self, ready: { managedObjectReady($0, origin: $1, freshness: $2, request: request) },
            failed: { managedObjectFailed($0, request: request) }, progress: { managedObjectProgress($0, request: request) },
            preview: { managedObjectPreview($0, request: request) })
    }

    /// `receive(.ready(object, .memory), request:)` without making the event: the memory hit
    /// `manage` answers on the caller's thread (a hot path, `manage-hit`).
    func receiveMemoryHit(_ object: any Sendable, request: ObjectRequest) {
        pass(
            object, as: Decoder.Object.self, to: { managedObjectReady($0, origin: .memory, freshness: .current, request: request) },
            otherwise: { managedObjectFailed($0, request: request) })
    }
}
