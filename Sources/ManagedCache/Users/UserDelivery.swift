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
            if let object = object as? Object {
                ready(object, origin, freshness)
            } else {
                failed(.decodingFailed(reason: "the shared object is a \(type(of: object)), not a \(Object.self)"))
            }
        case .failed(let error):
            failed(error)
        case .progress(let value):
            progress(value)
        case .preview(let object):
            if let object = object as? Object { preview(object) }
        }
    }
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
