/// The prefetches waiting for a free prefetch slot: highest priority first, oldest first among
/// equals, at most one per data key and decoder.
///
/// Why not an array: a prefetch of a request already waiting only changes its priority, so every
/// `prefetch` looked for its request in the queue, and every start looked for the best one, both
/// scanning the whole queue under the manager's lock. An app prefetching ahead of a long list keeps
/// hundreds waiting; in the `manage-latency` benchmark that made enqueuing a prefetch the longest hold
/// of the lock every `manage` takes (22 µs on average, up to 1.4 ms). Here both are a dictionary
/// lookup and a heap operation: a changed priority pushes a new ticket, and tickets that no longer
/// match their item (changed or dropped since) are skipped when they come up.
struct PrefetchQueue {
    /// What makes two prefetches the same: the bytes and the decoder (none: bytes only).
    struct Identity: Hashable {
        let dataKey: String
        let decoder: String?
    }

    /// An item's place in the order, as of when it was pushed.
    private struct Ticket: Comparable {
        let priority: LoadPriority
        let sequence: UInt64
        let identity: Identity

        /// Higher priority first, then lower sequence (older) first.
        static func < (lhs: Ticket, rhs: Ticket) -> Bool {
            lhs.priority != rhs.priority ? lhs.priority > rhs.priority : lhs.sequence < rhs.sequence
        }

        static func == (lhs: Ticket, rhs: Ticket) -> Bool {
            lhs.priority == rhs.priority && lhs.sequence == rhs.sequence
        }
    }

    private var items: [Identity: PrefetchItem] = [:]
    private var order = MinHeap<Ticket>()

    /// The prefetches waiting.
    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }
    /// Tickets in the heap, stale ones included (for the tests).
    var heapCount: Int { order.count }

    /// Adds `item` (whose identity must not be waiting already).
    mutating func append(_ item: PrefetchItem) {
        let identity = item.identity
        items[identity] = item
        order.push(Ticket(priority: item.priority, sequence: item.sequence, identity: identity))
    }

    /// Gives the waiting prefetch of `identity` `priority`, keeping its place among equals.
    /// Returns `false` when none waits.
    mutating func reprioritize(_ identity: Identity, to priority: LoadPriority) -> Bool {
        guard let queued = items[identity] else { return false }
        guard queued.priority != priority else { return true }
        append(PrefetchItem(request: queued.request, decoder: queued.decoder, priority: priority, sequence: queued.sequence))
        compactIfMostlyStale()
        return true
    }

    /// Takes the prefetch to start next, if any.
    mutating func popNext() -> PrefetchItem? {
        while let ticket = order.popMinimum() {
            guard let item = items[ticket.identity], item.priority == ticket.priority, item.sequence == ticket.sequence
            else { continue }  // changed or dropped since this ticket was pushed
            items.removeValue(forKey: ticket.identity)
            return item
        }
        return nil
    }

    /// Drops the waiting prefetches whose data key `matches`.
    mutating func removeAll(where matches: (String) -> Bool) {
        items = items.filter { !matches($0.key.dataKey) }
        compactIfMostlyStale()
    }

    /// Drops every waiting prefetch.
    mutating func removeAll() {
        items.removeAll()
        order.removeAll()
    }

    /// Rebuilds the heap from the items when stale tickets outnumber them, so reprioritizing the
    /// same requests over and over cannot grow it without bound.
    private mutating func compactIfMostlyStale() {
        guard order.count > 2 * items.count + 64 else { return }
        order = MinHeap(items.map { Ticket(priority: $0.value.priority, sequence: $0.value.sequence, identity: $0.key) })
    }
}

/// A prefetch waiting for a free prefetch slot.
struct PrefetchItem {
    let request: ObjectRequest
    let decoder: AnyObjectDecoder?
    let priority: LoadPriority
    /// Order of arrival, so the queue is FIFO within one priority.
    let sequence: UInt64

    /// Its place in `PrefetchQueue`'s lookup.
    var identity: PrefetchQueue.Identity {
        PrefetchQueue.Identity(dataKey: request.dataKey, decoder: decoder?.identifier)
    }
}
