/// The bounded FIFO of loads started for users (HJCache's loading buffer).
///
/// When a new load would exceed the capacity, the oldest entries are pushed out and the manager
/// cancels them: a fast scroll through a long table leaves only the rows at rest loading.
struct LoadingBuffer {
    private(set) var keys: [ObjectKey] = []
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { keys.count }

    func contains(_ key: ObjectKey) -> Bool { keys.contains(key) }

    /// Appends `key` as the newest load; returns the oldest keys pushed out, oldest first.
    mutating func push(_ key: ObjectKey) -> [ObjectKey] {
        keys.removeAll { $0 == key }
        keys.append(key)
        return overflow()
    }

    /// Removes `key` (its load finished or was cancelled).
    mutating func remove(_ key: ObjectKey) {
        keys.removeAll { $0 == key }
    }

    /// Changes the capacity (at least 1); returns the keys that no longer fit, oldest first.
    mutating func resize(to newCapacity: Int) -> [ObjectKey] {
        capacity = max(1, newCapacity)
        return overflow()
    }

    private mutating func overflow() -> [ObjectKey] {
        guard keys.count > capacity else { return [] }
        let excess = keys.count - capacity
        let pushedOut = Array(keys.prefix(excess))
        keys.removeFirst(excess)
        return pushedOut
    }
}
