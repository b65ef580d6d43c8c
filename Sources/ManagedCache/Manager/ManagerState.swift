import Foundation

/// Everything an `ObjectManager` knows, guarded by its one lock. Methods that start with `_`
/// run under that lock and must not call out to users, loaders or the disk; they collect the
/// work to do afterwards in a `PendingWork`.
struct ManagerState {
    var handlers: [ObjectKey: HandlerRecord] = [:]
    var fetches: [String: FetchRecord] = [:]
    var attachments: [ObjectIdentifier: Attachment] = [:]
    var loadingBuffer: LoadingBuffer
    var prefetchQueue: [PrefetchItem] = []
    var runningPrefetches = 0
    var failures = FailureMemory()
    var statistics = ManagerStatistics()
    var nextIdentifier: UInt64 = 1
    var sweepThreshold = 64
    var isShutDown = false
    /// Running preloads, cancelled when a real request needs the disk.
    var preloads: [Task<Int, Never>] = []

    init(loadingBufferSize: Int) {
        loadingBuffer = LoadingBuffer(capacity: loadingBufferSize)
    }

    mutating func _makeIdentifier() -> UInt64 {
        defer { nextIdentifier &+= 1 }
        return nextIdentifier
    }
}

/// One handler per object key: HJCache's `HJMOHandler`, as a state machine.
///
/// A class, so the table holds references and every change happens in place: handlers are
/// touched on every `manage`, and copying a record of this size in and out of the dictionary cost
/// more than the rest of a memory hit. Not `Sendable`: handlers live in `ManagerState` and are
/// only read or changed under the manager's lock.
final class HandlerRecord {
    /// new → loading → loaded → ready, or failed; cancellation returns to new.
    enum Phase {
        /// Nothing under way (never started, or cancelled: managing a user restarts it).
        case new
        /// Waiting for the bytes of fetch `fetch`.
        case loading(fetch: UInt64)
        /// The bytes are here and being decoded.
        case loaded
        /// The shared object.
        case ready(any Sendable, DataOrigin)
        /// The last load failed; managing a user retries (subject to the failure memory).
        case failed(ManagedCacheError)

        var isBusy: Bool {
            switch self {
            case .loading, .loaded: return true
            default: return false
            }
        }
    }

    let key: ObjectKey
    let decoder: AnyObjectDecoder
    /// The request and policy of the user that started the current load.
    var request: ObjectRequest
    var policy: LoadPolicy
    var users = HandlerUsers()
    var phase: Phase = .new
    /// Bumped on every start and cancellation, so results of an abandoned load are ignored.
    var generation: UInt64 = 0
    /// A prefetch with this handler's decoder wants the object even with no users.
    var heldByPrefetch = false
    /// How long the ready object is fresh (HTTP caching).
    var freshness: HTTPFreshness?
    /// A stale object whose revalidation is under way: a `304` makes it current again.
    var staleObject: CachedObject?
    /// The fetch revalidating a ready object in the background (stale-while-revalidate).
    var revalidatingFetch: UInt64?
    /// The ready object's memory-cache cost, kept so re-inserting it costs what decoding said.
    var objectCost = 0

    init(key: ObjectKey, decoder: AnyObjectDecoder, request: ObjectRequest, policy: LoadPolicy) {
        self.key = key
        self.decoder = decoder
        self.request = request
        self.policy = policy
    }

    /// Whether this handler waits for fetch `identifier` (loading, or revalidating in the background).
    func isWaiting(for identifier: UInt64) -> Bool {
        if case .loading(identifier) = phase { return true }
        return revalidatingFetch == identifier
    }

    /// Whether any user is still alive.
    var hasLiveUsers: Bool { users.contains { $0.user != nil } }

    /// Whether a live user keeps the load out of the loading buffer's reach.
    var hasLiveUnevictableUsers: Bool { users.contains { $0.user != nil && !$0.evictable } }

    /// Drops the slots of deallocated users.
    func compactUsers() { users.removeAll { $0.user == nil } }
}

/// One user's attachment to one handler: the handler lists it, and the manager's side table
/// finds it by user, so re-managing a user detaches it from its old key without the user storing
/// anything.
///
/// A class, shared by the table and the handler's list, and reused when its user is managed
/// again: `manage` on a memory hit touches it several times, and copying a struct holding a weak
/// reference costs atomic side-table updates on every copy (iterating an array copies each
/// element). Not `Sendable`: it lives in `ManagerState`, read and changed under the manager's lock.
final class Attachment {
    weak var user: (any ManagedObjectUser)?
    let userID: ObjectIdentifier
    /// The key, request and identifier of the user's current request; `attachment` changes with
    /// every `manage`, so deliveries decided for an earlier one can be recognised and dropped.
    var key: ObjectKey
    var request: ObjectRequest
    var attachment: UInt64
    /// Whether the loading buffer may cancel the load for this user (an `async` caller is not).
    var evictable: Bool
    /// Whether the handler of `key` lists it: false once its request ended in a failure or a
    /// cancellation (which detaches it) or it was detached. Kept by `HandlerUsers`.
    var isListed = false

    init(user: some ManagedObjectUser, key: ObjectKey, request: ObjectRequest, attachment: UInt64, evictable: Bool) {
        self.user = user
        userID = ObjectIdentifier(user)
        self.key = key
        self.request = request
        self.attachment = attachment
        self.evictable = evictable
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
        for attachment in self {
            if shouldRemove(attachment) { attachment.isListed = false } else { kept.append(attachment) }
        }
        guard kept.count != (first == nil ? 0 : 1 + others.count) else { return }
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

/// One download per data key, shared by every handler (decoder) of that key and by prefetches.
struct FetchRecord {
    let identifier: UInt64
    let dataKey: String
    let request: ObjectRequest
    let policy: LoadPolicy
    var subscribers: Set<ObjectKey> = []
    /// Data-only prefetches waiting for these bytes.
    var prefetchHolds = 0
    /// Whether the fetch counts against the prefetch concurrency limit.
    var inPrefetchLane: Bool
    var task: Task<Void, Never>?
    var progress = LoadProgress(receivedBytes: 0, expectedBytes: nil)

    var isWanted: Bool { !subscribers.isEmpty || prefetchHolds > 0 }
}

/// A prefetch waiting for a free prefetch slot.
struct PrefetchItem {
    let request: ObjectRequest
    let decoder: AnyObjectDecoder?
}

/// Work decided under the lock and done after releasing it.
struct PendingWork {
    var deliveries: [PendingDelivery] = []
    var fileCachePurges: [String] = []
    var events: [ManagerEvent] = []
    /// Values evicted from caches, released outside the lock.
    var released: [any Sendable] = []

    var isEmpty: Bool { deliveries.isEmpty && fileCachePurges.isEmpty && events.isEmpty && released.isEmpty }

    mutating func append(_ other: PendingWork) {
        deliveries += other.deliveries
        fileCachePurges += other.fileCachePurges
        events += other.events
        released += other.released
    }
}
