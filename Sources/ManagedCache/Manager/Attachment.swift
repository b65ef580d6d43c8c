import Foundation
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
    // `@exclusivity(unchecked)` on the state below, as on `ObjectHandler`'s and for the same
    // reasons: no runtime check (a thread-local access set updated on every access of a hit), and
    // none could fire: every access happens under the manager's lock, and each is a whole read
    // or assignment, so none begins while another to the same property is under way.

    /// The user, held weakly, with what `manage` read from it; replaced when it is managed with
    /// another `callbackDelivery`.
    @exclusivity(unchecked) var link: any UserLink
    let userID: ObjectIdentifier
    /// The key, request and identifier of the user's current request; `attachment` changes with
    /// every `manage`, so deliveries decided for an earlier one can be recognised and dropped.
    @exclusivity(unchecked) var key: ObjectKey
    @exclusivity(unchecked) var request: ObjectRequest
    /// Set with `attach(_:)`, which publishes it.
    @exclusivity(unchecked) private(set) var attachment: UInt64
    /// `attachment` while this record is in the manager's table of users, 0 once it has left it:
    /// a delivery decided for this record checks it to know whether it is still current, without
    /// the manager's lock (`ObjectManager.deliverIfCurrent`). Written under the manager's lock, so
    /// reading it is the same as reading the table at that moment. Why its own lock: checking every
    /// callback under the manager's lock took a tenth of that lock's acquisitions.
    let currency: AttachmentCurrency
    /// Whether the loading buffer may cancel the load for this user (an `async` caller is not).
    @exclusivity(unchecked) var evictable: Bool
    /// Whether the handler of `key` lists it: false once its request ended in a failure or a
    /// cancellation (which detaches it) or it was detached. Kept by `HandlerUsers`, and cleared by
    /// `_detach` when its handler left the table.
    @exclusivity(unchecked) var isListed = false

    init(link: any UserLink, key: ObjectKey, request: ObjectRequest, attachment: UInt64, evictable: Bool) {
        self.link = link
        userID = link.userID
        self.key = key
        self.request = request
        self.attachment = attachment
        self.evictable = evictable
        currency = AttachmentCurrency(attachment)
    }

    /// Gives the record (in the table) a new attachment, for a new request of its user. Returns
    /// whether a callback for the previous one runs on another thread now (see `AttachmentCurrency`).
    @discardableResult
    func attach(_ attachment: UInt64) -> Bool {
        self.attachment = attachment
        return currency.publish(attachment)
    }

    /// Marks the record as out of the table: deliveries decided for it are no longer current.
    /// Returns whether a callback decided for it runs on another thread now.
    @discardableResult
    func retire() -> Bool {
        currency.publish(0)
    }

    /// Whether its user is alive.
    var isAlive: Bool { link.isAlive }
}

/// The attachment identifier a user's record holds in the manager's table (0: none), and the
/// gate every callback decided for that record passes through (see `Attachment.currency`).
///
/// A delivery is bound to one attachment: it is made only if that attachment is still the
/// record's current one, and the last check and the callback form one step. One lock guards it
/// all (`state`, a `WaitableLock`): a delivery waits there until no other callback of this user
/// runs, checks its attachment and notes its thread as the delivering one, in one acquisition,
/// and clears that note in a second once its callback returns. A new attachment (`publish`)
/// made while a callback for the old one runs on another thread reports it, and the `manage` or
/// `unmanage` that made it waits for that callback (`awaitDeliveryInFlight`, after the manager's
/// lock is released) before it returns. So once either has returned, no callback for the
/// request it replaced can reach the user: a reused cell never hears its last row's answer after
/// it was given a new row, and a user unmanaged hears nothing more.
///
///     delivery:  wait until no callback runs elsewhere ─▶ current? ─ no ──▶ dropped
///                                                           └ yes: note this thread ─▶ callback ─▶ clear the note
///     publish:   new attachment; a callback noted on another thread? ─▶ its `manage` awaits that one
///
/// A callback that manages or unmanages its own user runs on the delivering thread, which does
/// not wait for itself. Callbacks to one user run one at a time.
final class AttachmentCurrency: Sendable {
    private struct State {
        var attachment: UInt64
        /// Whether the final callback (the object or a failure) for `attachment` has been decided:
        /// progress and previews decided before it are dropped from then on.
        var finalDecided = false
        /// The thread inside `deliver(ifCurrent:_:)`'s callback, if any.
        var deliveringThread: pthread_t?
        /// Counts the callbacks begun, so an awaiting `manage` waits for the one it saw running
        /// and not for a later one (for its new attachment).
        var deliveries: UInt64 = 0
        /// The callback (by `deliveries`) running elsewhere when an attachment was last replaced.
        var deliveryToAwait: UInt64 = 0

        /// Whether a callback runs on a thread other than the caller's.
        var isDeliveringElsewhere: Bool {
            guard let deliveringThread else { return false }
            return pthread_equal(deliveringThread, pthread_self()) == 0
        }

        var isDeliveringHere: Bool {
            guard let deliveringThread else { return false }
            return pthread_equal(deliveringThread, pthread_self()) != 0
        }
    }

    private let state: WaitableLock<State>

    init(_ attachment: UInt64) {
        state = WaitableLock(State(attachment: attachment, deliveringThread: nil))
    }

    /// Sets the identifier (under the manager's lock). Returns whether a callback for the previous
    /// one runs on another thread now: the caller then waits for it with `awaitDeliveryInFlight`
    /// once it has released the manager's lock.
    @discardableResult
    func publish(_ attachment: UInt64) -> Bool {
        state.withLock { state in
            state.attachment = attachment
            state.finalDecided = false
            guard state.isDeliveringElsewhere else { return false }
            state.deliveryToAwait = state.deliveries
            return true
        }
    }

    /// Records that the final callback for `attachment` has been decided (under the manager's
    /// lock, as it is): a progress report or preview decided earlier and not yet made is dropped.
    func finalCallbackDecided(for attachment: UInt64) {
        state.withLock { state in
            if state.attachment == attachment { state.finalDecided = true }
        }
    }

    /// Whether `attachment` is still the record's current one.
    func isCurrent(_ attachment: UInt64) -> Bool {
        state.withLock { $0.attachment == attachment }
    }

    /// Whether a callback runs on another thread now.
    var isDeliveringElsewhere: Bool { state.withLock { $0.isDeliveringElsewhere } }

    /// Calls `callback` if `attachment` is current, as one step with the check (see the type's
    /// comment). `beforeFinal`: a progress report or preview, made only while the attachment's
    /// final callback has not been decided, so none follows it.
    func deliver(ifCurrent attachment: UInt64, beforeFinal: Bool = false, _ callback: () -> Void) {
        enum Step { case drop, call, callNested }
        let step = state.withLock(
            waitingUntil: { !$0.isDeliveringElsewhere },
            then: { state -> Step in
                guard state.attachment == attachment, !(beforeFinal && state.finalDecided) else { return .drop }
                // A callback of this user made this delivery (it managed another user, say): the
                // user's turn is this thread's already.
                if state.isDeliveringHere { return .callNested }
                state.deliveringThread = pthread_self()
                state.deliveries &+= 1
                return .call
            })
        switch step {
        case .drop:
            return
        case .callNested:
            callback()
        case .call:
            defer { state.withLock { $0.deliveringThread = nil } }
            callback()
        }
    }

    /// Returns once the callback that ran on another thread when the attachment was last replaced
    /// has returned (at once when none did, or when the one running is on this thread).
    func awaitDeliveryInFlight() {
        state.withLock(waitingUntil: { !$0.isDeliveringElsewhere || $0.deliveries != $0.deliveryToAwait }, then: { _ in })
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

    /// Makes every delivery decided so far for the user's current attachment stale, and waits for
    /// a callback of it already running on another thread. Called without the manager's lock,
    /// before the section that attaches the user anew is left.
    func retireCurrentAttachment(of userID: ObjectIdentifier) {
        guard let currency = table.withLock({ $0[userID] }) else { return }
        if currency.publish(0) { currency.awaitDeliveryInFlight() }
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
