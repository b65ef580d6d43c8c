import Foundation

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
/// metatypes, and `as!` between one type and itself takes the runtime's shortest path.
@inline(__always)
func passIfExactly<Value, Object>(_ value: Value, as _: Object.Type, to body: (Object) -> Void) -> Bool {
    guard Value.self == Object.self else { return false }
    body(value as! Object)
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
}
