import ManagedCacheLocking

/// One user's attachment to one handler: the handler lists it, and the manager's side table
/// finds it by user, so re-managing a user detaches it from its old key without the user storing
/// anything.
///
/// A class, shared by the table and the handler's list, and reused when its user is managed
/// again: `manage` on a memory hit touches it several times, and copying a struct holding a weak
/// reference costs atomic side-table updates on every copy (iterating an array copies each
/// element). Not `Sendable`: it lives in `ManagerState`, read and changed under the manager's lock.
final class Attachment {
    /// The user, held weakly, with what `manage` read from it; replaced when it is managed with
    /// another `callbackDelivery`.
    var link: any UserLink
    let userID: ObjectIdentifier
    /// The key, request and identifier of the user's current request; `attachment` changes with
    /// every `manage`, so deliveries decided for an earlier one can be recognised and dropped.
    var key: ObjectKey
    var request: ObjectRequest
    /// Set with `attach(_:)`, which publishes it.
    private(set) var attachment: UInt64
    /// `attachment` while this record is in the manager's table of users, 0 once it has left it:
    /// a delivery decided for this record checks it to know whether it is still current, without
    /// the manager's lock (`ObjectManager.deliverIfCurrent`). Written under the manager's lock, so
    /// reading it is the same as reading the table at that moment. Why its own lock: checking every
    /// callback under the manager's lock took a tenth of that lock's acquisitions (issue 20).
    let currency: AttachmentCurrency
    /// Whether the loading buffer may cancel the load for this user (an `async` caller is not).
    var evictable: Bool
    /// Whether the handler of `key` lists it: false once its request ended in a failure or a
    /// cancellation (which detaches it) or it was detached. Kept by `HandlerUsers`, and cleared by
    /// `_detach` when its handler left the table.
    var isListed = false

    init(link: any UserLink, key: ObjectKey, request: ObjectRequest, attachment: UInt64, evictable: Bool) {
        self.link = link
        userID = link.userID
        self.key = key
        self.request = request
        self.attachment = attachment
        self.evictable = evictable
        currency = AttachmentCurrency(attachment)
    }

    /// Gives the record (in the table) a new attachment, for a new request of its user.
    func attach(_ attachment: UInt64) {
        self.attachment = attachment
        currency.publish(attachment)
    }

    /// Marks the record as out of the table: deliveries decided for it are no longer current.
    func retire() {
        currency.publish(0)
    }

    /// Whether its user is alive.
    var isAlive: Bool { link.isAlive }
}

/// The attachment identifier a user's record holds in the manager's table (0: none), behind a
/// lock of its own (see `Attachment.currency`).
final class AttachmentCurrency: Sendable {
    private let current: Lock<UInt64>

    init(_ attachment: UInt64) {
        current = Lock(attachment)
    }

    /// Sets the identifier (under the manager's lock).
    func publish(_ attachment: UInt64) {
        current.withLock { $0 = attachment }
    }

    /// Whether `attachment` is still the record's current one.
    func isCurrent(_ attachment: UInt64) -> Bool {
        current.withLock { $0 == attachment }
    }
}

/// The currency of each record in the manager's table of users, by user, behind a lock of its
/// own (kept beside the table, under the manager's lock).
///
/// Why: a `manage` whose section is left to the lock's holder (`ManagerLock`) returns before its
/// user is attached anew. Deliveries decided for the user's earlier request must not reach it
/// from then on (a reused cell would show the last row's image), so that `manage` retires the
/// record's current attachment here first, without the manager's lock. The section then
/// publishes the new one when it runs.
final class AttachmentCurrencies: Sendable {
    private let table = Lock<[ObjectIdentifier: AttachmentCurrency]>([:])

    /// Records `record` as its user's (under the manager's lock, when it enters the table).
    func register(_ record: Attachment) {
        table.withLock { $0[record.userID] = record.currency }
    }

    /// Forgets `record` (under the manager's lock, when it leaves the table), unless a newer
    /// record of the same user replaced it.
    func unregister(_ record: Attachment) {
        table.withLock { table in
            if table[record.userID] === record.currency { table[record.userID] = nil }
        }
    }

    /// Makes every delivery decided so far for the user's current attachment stale. Called
    /// without the manager's lock, before the section that attaches the user anew is left.
    func retireCurrentAttachment(of userID: ObjectIdentifier) {
        table.withLock { $0[userID] }?.publish(0)
    }
}

/// The users a handler serves, in the order they came; keeps each attachment's `isListed`.
///
/// The first user is stored inline: most handlers serve one user, and a memory hit creates a
/// handler, so an array buffer for that one user was an allocation on every hit.
struct HandlerUsers: Sequence {
    private var first: Attachment?
    private var others: [Attachment] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ attachment: Attachment) {
        attachment.isListed = true
        if first == nil { first = attachment } else { others.append(attachment) }
    }

    mutating func removeAll(where shouldRemove: (Attachment) -> Bool) {
        if others.isEmpty {
            if let attachment = first, shouldRemove(attachment) {
                attachment.isListed = false
                first = nil
            }
            return
        }
        var kept: [Attachment] = []
        var removedAny = false
        for attachment in self {
            if shouldRemove(attachment) {
                attachment.isListed = false
                removedAny = true
            } else {
                kept.append(attachment)
            }
        }
        guard removedAny else { return }
        first = kept.first
        others = Array(kept.dropFirst())
    }

    mutating func removeAll() {
        for attachment in self { attachment.isListed = false }
        first = nil
        others.removeAll()
    }

    func makeIterator() -> Iterator { Iterator(first: first, others: others.makeIterator()) }

    struct Iterator: IteratorProtocol {
        fileprivate var first: Attachment?
        fileprivate var others: IndexingIterator<[Attachment]>

        mutating func next() -> Attachment? {
            if let attachment = first {
                first = nil
                return attachment
            }
            return others.next()
        }
    }
}
