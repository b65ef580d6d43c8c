import Foundation
import ManagedCacheLocking

/// One download per data key, shared by every handler (decoder) of that key and by prefetches.
///
/// A class, changed in place in `ManagerState.fetches` under the manager's lock: as a struct,
/// each change was a copy out of the table (retaining every field), a copy of the subscriber set
/// (shared with the table's copy, so not uniquely referenced) and a store back, in sections as
/// hot as starting a load and cancelling the one it pushes out of the loading buffer.
/// Not `Sendable`: it lives in `ManagerState`. What the fetch's own task reads while it runs is
/// in its `audience`, which is.
final class FetchRecord {
    let identifier: UInt64
    let dataKey: String
    let request: ObjectRequest
    let policy: LoadPolicy
    /// The handlers waiting for the bytes; change them with `subscribe` and `unsubscribe`, which
    /// keep `audience` in step.
    private(set) var subscribers: Set<ObjectKey> = []
    /// Data-only prefetches waiting for these bytes.
    var prefetchHolds = 0
    /// Whether the fetch counts against the prefetch concurrency limit.
    var inPrefetchLane: Bool
    /// Its task, created once the lock that created the fetch is released.
    let task: FetchTaskSlot
    /// The fetch's priority, which its loader reads (see `LoadCore._refreshPriority`).
    let priority: LoadPriorityCell
    /// The priority of the data-only prefetches in `prefetchHolds`.
    var prefetchPriority = LoadPriority.veryLow
    /// Guards the download's commit to the file cache: an object stored over the data key closes
    /// it.
    let writeGate = WriteGate()
    /// The preview sessions of its bytes.
    let previews: PreviewFeed
    /// Who its task tells of progress, previews and the bytes without the manager's lock.
    let audience = FetchAudience()

    init(
        identifier: UInt64, dataKey: String, request: ObjectRequest, policy: LoadPolicy, inPrefetchLane: Bool,
        task: FetchTaskSlot, priority: LoadPriorityCell, previews: PreviewFeed
    ) {
        self.identifier = identifier
        self.dataKey = dataKey
        self.request = request
        self.policy = policy
        self.inPrefetchLane = inPrefetchLane
        self.task = task
        self.priority = priority
        self.previews = previews
    }

    /// Adds the handler of `key`, which decodes with `decoder`, to the fetch's subscribers.
    func subscribe(_ key: ObjectKey, decoder: AnyObjectDecoder?) {
        subscribers.insert(key)
        if let decoder { audience.subscribe(key, decoder: decoder) }
    }

    /// Takes the handler of `key` off the fetch's subscribers.
    func unsubscribe(_ key: ObjectKey) {
        subscribers.remove(key)
        audience.unsubscribe(key)
    }

    /// The bytes received so far (the loading buffer's push-out policy may read it).
    var progress: LoadProgress { audience.progress }

    var isWanted: Bool { !subscribers.isEmpty || prefetchHolds > 0 }
}

/// Who hears a fetch while it runs, reachable from the fetch's task without the manager's lock:
/// the handlers subscribed to it, each key with its decoder (its bytes are decoded for them
/// before the section that ends the fetch), and their users, for progress and previews.
///
/// The locked code keeps it in step with the fetch's record: a handler subscribing adds its key
/// (`FetchRecord.subscribe`); a handler starting to load, or a user joining a loading handler,
/// adds the users (`listen(to:key:cancelsWhenAbandoned:)`). A user re-managed, unmanaged or
/// answered is not taken out there: each delivery made from here passes its user's gate
/// (`AttachmentCurrency`), which drops a progress report or a preview once its attachment is
/// replaced or its final callback decided; the next report takes it out.
///
/// Why: finding the users of a progress report under the manager's lock was one section of that
/// lock per chunk of every download, and one more for the previews at the first chunk.
final class FetchAudience: Sendable {
    /// A user to tell of progress and previews, as attached when it began listening.
    struct Listener: Sendable {
        /// Its delivery, with the event each report replaces.
        var delivery: PendingDelivery
        /// Its handler's policy cancels a load nobody waits for any more: a released user then
        /// asks the manager whether the load is abandoned (`LoadCore._fetchUsersReleased`).
        let cancelsWhenAbandoned: Bool
    }

    private struct State {
        var subscribers: [ObjectKey: AnyObjectDecoder] = [:]
        var listeners: [Listener] = []
        var progress = LoadProgress(receivedBytes: 0, expectedBytes: nil)
        var isDecoding = false
    }

    private let state = Lock(State())

    // MARK: - Kept by the manager's locked code

    func subscribe(_ key: ObjectKey, decoder: AnyObjectDecoder) {
        state.withLock { $0.subscribers[key] = decoder }
    }

    func unsubscribe(_ key: ObjectKey) {
        state.withLock { $0.subscribers[key] = nil }
    }

    /// Adds the user of `record`, for its current attachment to the handler of `key` (under the
    /// manager's lock, as the record is read there). A listener already there for the same
    /// record is replaced.
    func listen(to record: Attachment, key: ObjectKey, fetch: UInt64, cancelsWhenAbandoned: Bool) {
        let none = LoadProgress(receivedBytes: 0, expectedBytes: nil)
        let listener = Listener(
            delivery: PendingDelivery(to: record, key: key, event: .progress(none), fetch: fetch),
            cancelsWhenAbandoned: cancelsWhenAbandoned)
        state.withLock { state in
            state.listeners.removeAll { $0.delivery.currency === listener.delivery.currency }
            state.listeners.append(listener)
        }
    }

    // MARK: - Read by the fetch's task

    /// The bytes received so far.
    var progress: LoadProgress { state.withLock { $0.progress } }

    /// The download is over and its task decodes the bytes for the handlers subscribed now
    /// (returned): from now on `isDecoding`.
    func decodingStarts() -> [(key: ObjectKey, decoder: AnyObjectDecoder)] {
        state.withLock { state in
            state.isDecoding = true
            return state.subscribers.map { ($0.key, $0.value) }
        }
    }

    /// Whether the fetch's task decodes its bytes, before the section that ends the fetch: its
    /// loads are as good as done, and the loading buffer lets them go rather than cancel them
    /// (`LoadCore._handleBufferOverflow`, `_cancelIfAbandoned`), as it does once the fetch ended.
    var isDecoding: Bool { state.withLock { $0.isDecoding } }

    /// Records `progress` and returns the deliveries that tell the listening users, and whether
    /// a user whose load may be cancelled without users has been released (then the manager is
    /// asked, once for that user). Listeners no longer current are taken out (by attachment: one
    /// that listens again meanwhile, re-managed for the same key, stays).
    func progressed(_ progress: LoadProgress) -> (deliveries: [PendingDelivery], usersReleased: Bool) {
        let listeners = state.withLock { state -> [Listener] in
            state.progress = progress
            return state.listeners
        }
        var deliveries: [PendingDelivery] = []
        var gone: [(currency: AttachmentCurrency?, attachment: UInt64)] = []
        var usersReleased = false
        for var listener in listeners {
            let (currency, attachment) = (listener.delivery.currency, listener.delivery.attachment)
            guard currency?.isCurrent(attachment) == true else {
                gone.append((currency, attachment))
                continue
            }
            guard listener.delivery.user.isAlive else {
                gone.append((currency, attachment))
                usersReleased = usersReleased || listener.cancelsWhenAbandoned
                continue
            }
            listener.delivery.event = .progress(progress)
            deliveries.append(listener.delivery)
        }
        if !gone.isEmpty {
            state.withLock { state in
                state.listeners.removeAll { listener in
                    gone.contains { $0.currency === listener.delivery.currency && $0.attachment == listener.delivery.attachment }
                }
            }
        }
        return (deliveries, usersReleased)
    }

    /// The handlers to make preview sessions for at the first chunk, with their decoders: those
    /// whose decoder makes previews and that have a user listening who wants them. A handler
    /// joining later gets none (its previews would start mid-file).
    func previewSubscribers() -> [(key: ObjectKey, decoder: AnyObjectDecoder)] {
        let (subscribers, listeners) = state.withLock { ($0.subscribers, $0.listeners) }
        return subscribers.compactMap { key, decoder in
            guard decoder.makesPreviews,
                listeners.contains(where: { $0.delivery.key == key && $0.delivery.user.wantsPreviews && $0.delivery.user.isAlive })
            else { return nil }
            return (key, decoder)
        }
    }

    /// The deliveries of a preview of `key`'s object to the users listening who want previews.
    func previewDeliveries(_ preview: any Sendable, key: ObjectKey) -> [PendingDelivery] {
        state.withLock { $0.listeners }.compactMap { listener in
            guard listener.delivery.key == key, listener.delivery.user.wantsPreviews, listener.delivery.user.isAlive else { return nil }
            var delivery = listener.delivery
            delivery.event = .preview(preview)
            return delivery
        }
    }
}
