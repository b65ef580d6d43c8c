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
    /// Records of deallocated users replaced (left in their handlers' lists) since the last sweep.
    var replacedRecords = 0
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
    var hasLiveUsers: Bool { users.contains { $0.isAlive } }

    /// Whether a live user keeps the load out of the loading buffer's reach.
    var hasLiveUnevictableUsers: Bool { users.contains { $0.isAlive && !$0.evictable } }

    /// Drops the slots of deallocated users.
    func compactUsers() { users.removeAll { !$0.isAlive } }
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
