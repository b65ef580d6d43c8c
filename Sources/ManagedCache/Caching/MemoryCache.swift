import Foundation
import ManagedCacheLocking
import Synchronization  // the inlinable hit path calls Mutex.withLock directly

/// A thread-safe LRU cache bounded by entry count and by total cost (bytes).
///
/// The manager keeps decoded objects in one (`ObjectManager.memoryCache`); it can be used on its
/// own too. A hit refreshes the entry's recency; inserting past either limit evicts the least
/// recently used entries. An entry costlier than the whole cost limit is not stored.
///
/// Why not `NSCache`: on Linux it is not LRU (it evicts the cheapest entry, and among equals the
/// newest), it is not `Sendable`, and its lookups cost several times a locked `Dictionary`. Here one
/// `Mutex` guards a `Dictionary` from key to slot and a doubly linked list threaded through an array
/// of slots by index, so a hit moves no memory and allocates nothing.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    // The hit path is inlinable so that callers in other modules (an app's own lookups) run code
    // specialized for their key and value types, not the generic, value-witness-driven version.
    @usableFromInline let storage: Lock<LRUStorage<Key, Value>>

    /// Creates a cache holding at most `countLimit` entries and `costLimit` total cost.
    /// Either limit may be 0, which keeps nothing.
    public init(countLimit: Int = 20, costLimit: Int = 64 << 20) {
        storage = Lock(LRUStorage(countLimit: max(0, countLimit), costLimit: max(0, costLimit)))
    }

    /// The value for `key`, refreshing its recency; `nil` on a miss.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        storage.withLock { $0.value(forKey: key) }
    }

    /// Whether `key` is cached, without refreshing its recency.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        storage.withLock { $0.index[key] != nil }
    }

    /// Stores `value` under `key` as the most recent entry, then evicts least recently used entries
    /// until both limits hold. Returns the evicted values (so callers can release them outside any lock).
    @discardableResult
    public func setValue(_ value: Value, forKey key: Key, cost: Int) -> [Value] {
        storage.withLock { $0.setValue(value, forKey: key, cost: max(0, cost)) }
    }

    /// Removes and returns the value for `key`.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        storage.withLock { $0.removeValue(forKey: key) }
    }

    /// Removes every entry.
    public func removeAll() {
        let removed = storage.withLock { storage in
            let old = storage
            storage = LRUStorage(countLimit: storage.countLimit, costLimit: storage.costLimit)
            return old
        }
        _ = removed  // released here, outside the lock
    }

    /// Evicts least recently used entries until at most `count` entries and `cost` total cost remain.
    public func trim(toCount count: Int, cost: Int) {
        let evicted = storage.withLock { $0.evict(toCount: max(0, count), cost: max(0, cost)) }
        _ = evicted
    }

    /// The entry limit. Lowering it evicts at once.
    public var countLimit: Int {
        get { storage.withLock { $0.countLimit } }
        set {
            let evicted = storage.withLock { storage in
                storage.countLimit = max(0, newValue)
                return storage.evict(toCount: storage.countLimit, cost: storage.costLimit)
            }
            _ = evicted
        }
    }

    /// The total cost limit, in bytes. Lowering it evicts at once.
    public var costLimit: Int {
        get { storage.withLock { $0.costLimit } }
        set {
            let evicted = storage.withLock { storage in
                storage.costLimit = max(0, newValue)
                return storage.evict(toCount: storage.countLimit, cost: storage.costLimit)
            }
            _ = evicted
        }
    }

    /// The number of entries.
    public var count: Int { storage.withLock { $0.index.count } }

    /// The sum of the entries' costs.
    public var totalCost: Int { storage.withLock { $0.totalCost } }

    /// The keys from most to least recently used (for tests and diagnostics; O(n)).
    public var keysByRecency: [Key] { storage.withLock { $0.keysByRecency() } }
}

/// The unsynchronized state of a `MemoryCache`; every method runs under the cache's lock.
@usableFromInline
struct LRUStorage<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var newer: Int  // toward the head (most recent), -1 at the head
        @usableFromInline var older: Int  // toward the tail (least recent), -1 at the tail

        @inlinable
        init(key: Key?, value: Value?, cost: Int, newer: Int, older: Int) {
            self.key = key
            self.value = value
            self.cost = cost
            self.newer = newer
            self.older = older
        }
    }

    @usableFromInline var countLimit: Int
    @usableFromInline var costLimit: Int
    @usableFromInline var index: [Key: Int] = [:]
    @usableFromInline var slots: ContiguousArray<Slot> = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var head = -1
    @usableFromInline var tail = -1
    @usableFromInline var totalCost = 0

    @usableFromInline
    init(countLimit: Int, costLimit: Int) {
        self.countLimit = countLimit
        self.costLimit = costLimit
    }

    @inlinable
    mutating func value(forKey key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        if slot != head {
            unlink(slot)
            pushFront(slot)
        }
        return slots[slot].value
    }

    mutating func setValue(_ value: Value, forKey key: Key, cost: Int) -> [Value] {
        var evicted: [Value] = []
        if let old = removeValue(forKey: key) { evicted.append(old) }
        guard countLimit > 0, cost <= costLimit else {
            evicted.append(value)
            return evicted
        }
        let slot: Int
        let fresh = Slot(key: key, value: value, cost: cost, newer: -1, older: -1)
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = fresh
        } else {
            slot = slots.count
            slots.append(fresh)
        }
        index[key] = slot
        totalCost += cost
        pushFront(slot)
        evicted += evict(toCount: countLimit, cost: costLimit)
        return evicted
    }

    mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = index.removeValue(forKey: key) else { return nil }
        return release(slot)
    }

    mutating func evict(toCount count: Int, cost: Int) -> [Value] {
        var evicted: [Value] = []
        while tail >= 0, index.count > count || totalCost > cost {
            let slot = tail
            if let key = slots[slot].key { index.removeValue(forKey: key) }
            if let value = release(slot) { evicted.append(value) }
        }
        return evicted
    }

    func keysByRecency() -> [Key] {
        var keys: [Key] = []
        var slot = head
        while slot >= 0 {
            if let key = slots[slot].key { keys.append(key) }
            slot = slots[slot].older
        }
        return keys
    }

    /// Unlinks `slot`, clears it and puts it on the free list; the caller has removed its key.
    private mutating func release(_ slot: Int) -> Value? {
        unlink(slot)
        let value = slots[slot].value
        totalCost -= slots[slot].cost
        slots[slot] = Slot(key: nil, value: nil, cost: 0, newer: -1, older: -1)
        freeSlots.append(slot)
        return value
    }

    @inlinable
    mutating func unlink(_ slot: Int) {
        let newer = slots[slot].newer, older = slots[slot].older
        if newer >= 0 { slots[newer].older = older } else { head = older }
        if older >= 0 { slots[older].newer = newer } else { tail = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }

    @inlinable
    mutating func pushFront(_ slot: Int) {
        slots[slot].older = head
        slots[slot].newer = -1
        if head >= 0 { slots[head].newer = slot }
        head = slot
        if tail < 0 { tail = slot }
    }
}
