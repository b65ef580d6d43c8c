/// The bounded FIFO of loads started for users (HJCache's loading buffer), ordered by priority.
///
/// When a new load would exceed the capacity, loads are pushed out and the manager cancels them:
/// a fast scroll through a long table leaves only the rows at rest loading. By default
/// (`LowestPriorityThenOldest`) the load pushed out is the oldest of those with the lowest
/// ``LoadPriority``, the new one included, so with equal priorities this is HJCache's FIFO, and a
/// low-priority load never pushes out a higher one; a `LoadingBufferPushOutPolicy` may choose
/// otherwise.
///
/// ```
/// capacity 3, all .normal:   [a b c] + d        → [b c d], a pushed out (FIFO)
/// a is .high:                [a b c] + d        → [a c d], b pushed out
/// all .high, d is .low:      [a b c] + d(.low)  → [a b c], d pushed out
/// ```
struct LoadingBuffer {
    private struct Entry {
        let key: ObjectKey
        var priority: LoadPriority
        /// Whether the load is cancelled once its users have all gone (its policy does not
        /// finish loads without users).
        let cancelsWhenAbandoned: Bool
    }

    /// Oldest first.
    private var entries: [Entry] = []
    private(set) var capacity: Int
    /// The policy choosing what is pushed out; `nil` for the default, which needs no progress.
    private let pushOut: (any LoadingBufferPushOutPolicy)?

    init(capacity: Int, pushOut: any LoadingBufferPushOutPolicy = LowestPriorityThenOldest()) {
        self.capacity = max(1, capacity)
        self.pushOut = pushOut is LowestPriorityThenOldest ? nil : pushOut
    }

    /// Whether the push-out policy reads the loads' progress (not the default's).
    var pushOutReadsProgress: Bool { pushOut != nil }

    /// The keys, oldest first.
    var keys: [ObjectKey] { entries.map(\.key) }

    /// The keys of loads cancelled once their users have all gone, oldest first, other than
    /// `excluded`: the only ones the manager checks for abandonment before a push (none under
    /// the default policy, which finishes such loads: then nothing is looked up or allocated).
    func keysCancelledWhenAbandoned(excluding excluded: ObjectKey) -> [ObjectKey] {
        entries.lazy.filter { $0.cancelsWhenAbandoned && $0.key != excluded }.map(\.key)
    }

    /// Appends `key` as the newest load with `priority`; returns the keys pushed out, in the order
    /// they were chosen (by default lowest priority first, oldest first within one priority).
    /// `cancelsWhenAbandoned`: whether the load's policy cancels it once its users have all gone.
    /// `progress`: each load's bytes so far, for a policy that reads them.
    mutating func push(
        _ key: ObjectKey, priority: LoadPriority = .normal, cancelsWhenAbandoned: Bool = false,
        progress: (ObjectKey) -> LoadProgress = { _ in LoadProgress(receivedBytes: 0, expectedBytes: nil) }
    ) -> [ObjectKey] {
        entries.removeAll { $0.key == key }
        entries.append(Entry(key: key, priority: priority, cancelsWhenAbandoned: cancelsWhenAbandoned))
        return overflow(progress: progress)
    }

    /// Removes `key` (its load finished or was cancelled).
    mutating func remove(_ key: ObjectKey) {
        entries.removeAll { $0.key == key }
    }

    /// Changes the capacity (at least 1); returns the keys that no longer fit.
    mutating func resize(
        to newCapacity: Int, progress: (ObjectKey) -> LoadProgress = { _ in LoadProgress(receivedBytes: 0, expectedBytes: nil) }
    ) -> [ObjectKey] {
        capacity = max(1, newCapacity)
        return overflow(progress: progress)
    }

    private mutating func overflow(progress: (ObjectKey) -> LoadProgress) -> [ObjectKey] {
        var pushedOut: [ObjectKey] = []
        while entries.count > capacity {
            let victim: Int
            if let pushOut {
                let loads = entries.map { BufferedLoad(key: $0.key, priority: $0.priority, progress: progress($0.key)) }
                let chosen = pushOut.loadToPushOut(loads)
                victim = entries.indices.contains(chosen) ? chosen : 0
            } else {
                victim = LowestPriorityThenOldest.index(in: entries, priority: \.priority)
            }
            pushedOut.append(entries.remove(at: victim).key)
        }
        return pushedOut
    }
}
