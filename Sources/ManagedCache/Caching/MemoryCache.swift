import Foundation
import ManagedCacheLocking

#if MANAGEDCACHE_SWIFT_MUTEX
// In comparison builds `Lock` is `Mutex`, and the inlinable hit path calls `Mutex.withLock`
// directly, which needs the import here.
// portability-lint: allow a comparison build on Linux only (-DMANAGEDCACHE_SWIFT_MUTEX)
import Synchronization
#endif

/// A thread-safe LRU cache bounded by entry count and by total cost (bytes).
///
/// The manager keeps decoded objects in one (`ObjectManager.memoryCache`); it can be used on its
/// own too. A hit refreshes the entry's recency; inserting past either limit evicts the least
/// recently used entries, or those a ``MemoryCacheEvictionPolicy`` chooses
/// (``init(countLimit:costLimit:eviction:)``). An entry costlier than the whole cost limit is not
/// stored.
///
/// Why not `NSCache`: on Linux it is not LRU (it evicts the cheapest entry, and among equals the
/// newest), it is not `Sendable`, and its lookups cost several times a locked `Dictionary`. Here one
/// `Mutex` guards a hash table of slot numbers and a doubly linked list threaded through an array
/// of slots by index, so a hit moves no memory and allocates nothing, and an insert that evicts
/// allocates nothing either (`insert(_:forKey:cost:)`).
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    // The hit path is inlinable so that callers in other modules (an app's own lookups) run code
    // specialized for their key and value types, not the generic, value-witness-driven version.
    @usableFromInline let storage: Lock<LRUStorage<Key, Value>>
    /// Which entries go first; kept to make a new policy when the cache is emptied.
    private let eviction: MemoryCacheEviction

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries to keep. Default 20; 0 keeps nothing.
    ///   - costLimit: The most total cost to keep. Default 64 MiB; 0 keeps nothing.
    ///   - eviction: Which entries go first when the cache is over a limit. Default
    ///     ``MemoryCacheEviction/leastRecentlyUsed``.
    public init(countLimit: Int = 20, costLimit: Int = 64 << 20, eviction: MemoryCacheEviction = .leastRecentlyUsed) {
        self.eviction = eviction
        storage = Lock(
            LRUStorage(countLimit: max(0, countLimit), costLimit: max(0, costLimit), policy: eviction.makePolicy?()))
    }

    /// Looks a key up, making its entry the most recently used.
    ///
    /// - Parameter key: The key.
    /// - Returns: The value, or `nil` on a miss.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        storage.withLock { $0.value(forKey: key) }
    }

    /// Tells whether a key is cached, without refreshing its recency.
    ///
    /// - Parameter key: The key.
    /// - Returns: `true` when the cache holds a value for it.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        storage.withLock { $0.find(key, hash: key.hashValue).slot >= 0 }
    }

    /// Stores `value` under `key` as the most recent entry, then evicts least recently used entries
    /// until both limits hold. Returns the evicted values (so callers can release them outside any lock).
    ///
    /// When the caller has no use for the evicted values, ``insert(_:forKey:cost:)`` is cheaper: it
    /// collects nothing in an array.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Its key; a previous value of the key is replaced.
    ///   - cost: What it counts against ``costLimit`` (negative counts as 0). A value costlier than
    ///     the whole limit is not stored.
    /// - Returns: The values evicted to make room, least recently used first.
    @inlinable
    @discardableResult
    public func setValue(_ value: Value, forKey key: Key, cost: Int) -> [Value] {
        storage.withLock { $0.insert(value, forKey: key, cost: max(0, cost)) }.array
    }

    /// Stores `value` under `key` as the most recent entry, then evicts least recently used entries
    /// until both limits hold, like `setValue(_:forKey:cost:)`, and drops the evicted values.
    ///
    /// The evicted values are released when this returns, after the cache's lock is released (so
    /// a value's `deinit` may use the cache), and without allocating: one or two evicted values,
    /// the usual case, are held inline. Use it for inserts on hot paths.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Its key; a previous value of the key is replaced.
    ///   - cost: What it counts against ``costLimit`` (negative counts as 0).
    @inlinable
    public func insert(_ value: Value, forKey key: Key, cost: Int) {
        let evicted = storage.withLock { $0.insert(value, forKey: key, cost: max(0, cost)) }
        _ = evicted  // released here, outside the lock
    }

    /// Removes a key's entry.
    ///
    /// - Parameter key: The key.
    /// - Returns: The removed value, or `nil` when there was none.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        storage.withLock { $0.removeValue(forKey: key) }
    }

    /// Removes every entry.
    public func removeAll() {
        let removed = storage.withLock { storage in
            let old = storage
            storage = LRUStorage(countLimit: storage.countLimit, costLimit: storage.costLimit, policy: eviction.makePolicy?())
            return old
        }
        _ = removed  // released here, outside the lock
    }

    /// Evicts least recently used entries until both bounds hold; the limits stay as they are.
    ///
    /// - Parameters:
    ///   - count: The most entries to keep now.
    ///   - cost: The most total cost to keep now.
    public func trim(toCount count: Int, cost: Int) {
        let evicted = storage.withLock { $0.evict(toCount: max(0, count), cost: max(0, cost)) }
        _ = evicted
    }

    /// The entry limit. Lowering it evicts at once.
    public var countLimit: Int {
        get { storage.withLock { $0.countLimit } }
        set { changeLimits { $0.countLimit = max(0, newValue) } }
    }

    /// The total cost limit, in bytes. Lowering it evicts at once.
    public var costLimit: Int {
        get { storage.withLock { $0.costLimit } }
        set { changeLimits { $0.costLimit = max(0, newValue) } }
    }

    /// Applies `change` to the limits and evicts what no longer fits, released after the lock.
    private func changeLimits(_ change: (inout LRUStorage<Key, Value>) -> Void) {
        let evicted = storage.withLock { storage in
            change(&storage)
            return storage.evict(toCount: storage.countLimit, cost: storage.costLimit)
        }
        _ = evicted
    }

    /// The number of entries.
    public var count: Int { storage.withLock { $0.count } }

    /// The sum of the entries' costs.
    public var totalCost: Int { storage.withLock { $0.totalCost } }

    /// The keys from most to least recently used (for tests and diagnostics; O(n)).
    @available(*, deprecated, message: "for tests and diagnostics only; it leaves the public API in a later release")
    public var keysByRecency: [Key] { keysFromMostRecent }

    /// The keys from most to least recently used, whatever the eviction policy (for tests and
    /// diagnostics; O(n)).
    package var keysFromMostRecent: [Key] { storage.withLock { $0.keysByRecency() } }
}

/// The values an insert or a trim took out of the cache, held until the caller releases the lock:
/// inline for up to two (an insert at the count limit evicts one), in an array beyond.
@usableFromInline
enum EvictedValues<Value> {
    case none
    case one(Value)
    case two(Value, Value)
    case many([Value])

    @inlinable
    mutating func append(_ value: Value) {
        switch consume self {
        case .none: self = .one(value)
        case .one(let first): self = .two(first, value)
        case .two(let first, let second): self = .many([first, second, value])
        case .many(var values):
            values.append(value)
            self = .many(values)
        }
    }

    /// The values in eviction order.
    @inlinable
    var array: [Value] {
        switch self {
        case .none: []
        case .one(let first): [first]
        case .two(let first, let second): [first, second]
        case .many(let values): values
        }
    }
}

/// A cache's eviction policy, changed in place under the cache's lock.
@usableFromInline
final class EvictionPolicyBox {
    @usableFromInline var policy: any MemoryCacheEvictionPolicy

    @usableFromInline
    init(_ policy: any MemoryCacheEvictionPolicy) {
        self.policy = policy
    }
}

/// The unsynchronized state of a `MemoryCache`; every method runs under the cache's lock.
///
/// Entries (key, its hash, value, cost) live in one array and their LRU links in another, indexed
/// alike: a hit rewrites the links of three neighbouring entries, and 8-byte links keep those
/// writes in a few cache lines. The key table is open addressing over 4-byte slot numbers (linear
/// probing, deletion by backward shift, at most half full), each key compared against its entry's
/// stored hash first: the key is stored once (a `Dictionary` from key to slot would store and
/// retain it a second time on every insert) and the table stays small enough to stay in cache.
@usableFromInline
struct LRUStorage<Key: Hashable, Value> {
    /// One entry. A free entry keeps its last key until it is reused (a key is not optional, so
    /// that comparing one on a hit borrows it instead of copying and retaining it); its value is
    /// released at once.
    @usableFromInline
    struct Entry {
        @usableFromInline var key: Key
        @usableFromInline var hash: Int
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int

        @inlinable
        init(key: Key, hash: Int, value: Value?, cost: Int) {
            self.key = key
            self.hash = hash
            self.value = value
            self.cost = cost
        }
    }

    @usableFromInline
    struct Link {
        @usableFromInline var newer: Int32  // toward the head (most recent), -1 at the head
        @usableFromInline var older: Int32  // toward the tail (least recent), -1 at the tail

        @inlinable
        init(newer: Int32, older: Int32) {
            self.newer = newer
            self.older = older
        }
    }

    @usableFromInline var countLimit: Int
    @usableFromInline var costLimit: Int
    /// Slot numbers by hash position, -1 for an empty position; a power of two long (or empty).
    @usableFromInline var table: ContiguousArray<Int32> = []
    @usableFromInline var count = 0
    @usableFromInline var entries: ContiguousArray<Entry> = []
    @usableFromInline var links: ContiguousArray<Link> = []
    @usableFromInline var freeSlots: ContiguousArray<Int32> = []
    @usableFromInline var head: Int32 = -1
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var totalCost = 0
    /// The eviction policy; `nil` for the least recently used order, which the links above give
    /// for nothing: then no policy is asked on any lookup. In a box: testing an optional
    /// existential for `nil` copies it through its type's value witnesses (a lookup cost 40 %
    /// more), testing a reference is one comparison.
    @usableFromInline var policy: EvictionPolicyBox?

    @usableFromInline
    init(countLimit: Int, costLimit: Int, policy: (any MemoryCacheEvictionPolicy)? = nil) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.policy = policy.map(EvictionPolicyBox.init)
    }

    // MARK: The key table

    /// The table position holding `key` and its slot, or the empty position where it would go
    /// and -1; (-1, -1) when the table is empty.
    @inlinable
    func find(_ key: Key, hash: Int) -> (position: Int, slot: Int32) {
        guard !table.isEmpty else { return (-1, -1) }
        let mask = table.count &- 1
        var position = hash & mask
        while true {
            let slot = table[position]
            if slot < 0 { return (position, -1) }
            if entries[Int(slot)].hash == hash, entries[Int(slot)].key == key { return (position, slot) }
            position = (position &+ 1) & mask
        }
    }

    /// The table position of `slot`, which is in the table.
    @inlinable
    func position(of slot: Int32) -> Int {
        let mask = table.count &- 1
        var position = entries[Int(slot)].hash & mask
        while table[position] != slot { position = (position &+ 1) & mask }
        return position
    }

    /// Empties `position` and moves later entries of its probe run back into the gap, so that
    /// every entry stays reachable from its hash's position without tombstones.
    @inlinable
    mutating func vacate(_ position: Int) {
        let mask = table.count &- 1
        var hole = position
        var next = (position &+ 1) & mask
        while table[next] >= 0 {
            let ideal = entries[Int(table[next])].hash & mask
            // The entry at `next` may fill the hole when the hole lies on its probe path.
            if (next &- ideal) & mask >= (next &- hole) & mask {
                table[hole] = table[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        table[hole] = -1
    }

    /// Doubles the table (at least 16 positions) and reinserts every slot from its stored hash.
    @usableFromInline
    mutating func grow() {
        let capacity = max(16, table.count * 2)
        var grown = ContiguousArray<Int32>(repeating: -1, count: capacity)
        let mask = capacity - 1
        for slot in table where slot >= 0 {
            var position = entries[Int(slot)].hash & mask
            while grown[position] >= 0 { position = (position + 1) & mask }
            grown[position] = slot
        }
        table = grown
    }

    // MARK: Operations

    @inlinable
    mutating func value(forKey key: Key) -> Value? {
        let slot = find(key, hash: key.hashValue).slot
        guard slot >= 0 else { return nil }
        if slot != head {
            unlink(slot)
            pushFront(slot)
        }
        if let policy { policy.policy.entryRead(Int(slot)) }
        return entries[Int(slot)].value
    }

    /// Stores `value` as the most recent entry (one probe of the key table), then evicts.
    @inlinable
    mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> EvictedValues<Value> {
        var evicted = EvictedValues<Value>.none
        let hash = key.hashValue
        guard countLimit > 0, cost <= costLimit else {
            if let old = removeValue(forKey: key, hash: hash) { evicted.append(old) }
            evicted.append(value)
            return evicted
        }
        if (count &+ 1) &* 2 > table.count { grow() }
        let (position, existing) = find(key, hash: hash)
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            entries[Int(slot)] = Entry(key: key, hash: hash, value: value, cost: cost)
        } else {
            slot = Int32(entries.count)
            entries.append(Entry(key: key, hash: hash, value: value, cost: cost))
            links.append(Link(newer: -1, older: -1))
        }
        table[position] = slot
        if existing >= 0 {
            if let old = release(existing) { evicted.append(old) }
        } else {
            count &+= 1
        }
        totalCost &+= cost
        pushFront(slot)
        if let policy { policy.policy.entryStored(Int(slot), cost: cost) }
        evict(toCount: countLimit, cost: costLimit, into: &evicted)
        return evicted
    }

    @inlinable
    mutating func removeValue(forKey key: Key) -> Value? {
        removeValue(forKey: key, hash: key.hashValue)
    }

    @inlinable
    mutating func removeValue(forKey key: Key, hash: Int) -> Value? {
        let (position, slot) = find(key, hash: hash)
        guard slot >= 0 else { return nil }
        vacate(position)
        count &-= 1
        return release(slot)
    }

    @inlinable
    mutating func evict(toCount limit: Int, cost: Int, into evicted: inout EvictedValues<Value>) {
        while tail >= 0, count > limit || totalCost > cost {
            let slot = policy == nil ? tail : policyVictim()
            vacate(position(of: slot))
            count &-= 1
            if let value = release(slot) { evicted.append(value) }
        }
    }

    mutating func evict(toCount count: Int, cost: Int) -> EvictedValues<Value> {
        var evicted = EvictedValues<Value>.none
        evict(toCount: count, cost: cost, into: &evicted)
        return evicted
    }

    /// The entry the policy chooses, or the least recently used one when it names none.
    @usableFromInline
    mutating func policyVictim() -> Int32 {
        guard let chosen = policy?.policy.entryToEvict(), chosen >= 0, chosen < entries.count, entries[chosen].value != nil
        else { return tail }
        return Int32(chosen)
    }

    func keysByRecency() -> [Key] {
        var keys: [Key] = []
        var slot = head
        while slot >= 0 {
            keys.append(entries[Int(slot)].key)
            slot = links[Int(slot)].older
        }
        return keys
    }

    /// Unlinks `slot`, clears it and puts it on the free list; the caller has taken it out of the
    /// key table (or put another slot at its position).
    @inlinable
    mutating func release(_ slot: Int32) -> Value? {
        unlink(slot)
        if let policy { policy.policy.entryRemoved(Int(slot)) }
        totalCost &-= entries[Int(slot)].cost
        let value = entries[Int(slot)].value
        entries[Int(slot)].value = nil
        entries[Int(slot)].cost = 0
        freeSlots.append(slot)
        return value
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let link = links[Int(slot)]
        if link.newer >= 0 { links[Int(link.newer)].older = link.older } else { head = link.older }
        if link.older >= 0 { links[Int(link.older)].newer = link.newer } else { tail = link.newer }
        links[Int(slot)] = Link(newer: -1, older: -1)
    }

    @inlinable
    mutating func pushFront(_ slot: Int32) {
        links[Int(slot)] = Link(newer: -1, older: head)
        if head >= 0 { links[Int(head)].newer = slot }
        head = slot
        if tail < 0 { tail = slot }
    }
}

extension MemoryCache where Value == CachedObject {
    /// Whether the key's entry is `entry` itself, asked without refreshing the entry's recency:
    /// for the manager's check that dropping its own reference to that value frees nothing (a
    /// check, not a read).
    func holds(_ entry: CachedObject, forKey key: Key) -> Bool {
        storage.withLock { storage in
            let slot = storage.find(key, hash: key.hashValue).slot
            return slot >= 0 && storage.entries[Int(slot)].value === entry
        }
    }
}
