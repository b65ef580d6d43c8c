/// Decides which entry a ``MemoryCache`` evicts when an insert or a lower limit puts it over its
/// count or cost limit. The default, ``MemoryCacheEviction/leastRecentlyUsed``, needs no policy:
/// the cache evicts its least recently used entry, from the recency list it keeps anyway.
///
/// A policy sees entries by number: each stored entry has a small number, the same for as long
/// as the entry stays in the cache (a hit or a new value for its key keeps or changes it, as the
/// calls below say), and given to another entry once it has left. The cache calls the policy
/// under its lock, so the calls never overlap and a policy needs no lock of its own; keep them
/// short, as a lookup waits for them.
///
/// ```swift
/// /// Evicts the entry read the fewest times (least frequently used), never the one just stored.
/// struct LeastFrequentlyUsed: MemoryCacheEvictionPolicy {
///     var reads: [Int: Int] = [:]
///     var newest: Int?
///     mutating func entryStored(_ entry: Int, cost: Int) {
///         reads[entry] = 0
///         newest = entry
///     }
///     mutating func entryRead(_ entry: Int) { reads[entry, default: 0] += 1 }
///     mutating func entryRemoved(_ entry: Int) { reads[entry] = nil }
///     mutating func entryToEvict() -> Int? {
///         reads.filter { $0.key != newest }.min { $0.value < $1.value }?.key
///     }
/// }
///
/// var configuration = ObjectManager.Configuration()
/// configuration.memoryCacheEviction = .custom { LeastFrequentlyUsed() }
/// ```
public protocol MemoryCacheEvictionPolicy: Sendable {
    /// A value was stored as entry `entry` (a new key, or a new value of a key: then the old
    /// value's entry is removed first, with `entryRemoved(_:)`).
    ///
    /// - Parameters:
    ///   - entry: The entry's number.
    ///   - cost: The cost it counts against the cache's cost limit.
    mutating func entryStored(_ entry: Int, cost: Int)
    /// A lookup (``MemoryCache/value(forKey:)``) found entry `entry`.
    ///
    /// - Parameter entry: The entry's number.
    mutating func entryRead(_ entry: Int)
    /// Entry `entry` left the cache (evicted, removed, or replaced by a new value of its key).
    ///
    /// - Parameter entry: The entry's number; it may be given to a new entry afterwards.
    mutating func entryRemoved(_ entry: Int)
    /// The entry to evict next, while the cache is over a limit; `nil`, or a number that is not
    /// an entry of the cache, evicts the least recently used entry instead.
    ///
    /// - Returns: The number of an entry stored now.
    mutating func entryToEvict() -> Int?
}

/// Which entries a ``MemoryCache`` evicts first: the least recently used (the default), or
/// those a ``MemoryCacheEvictionPolicy`` chooses. Set for the manager's memory cache in
/// ``ObjectManager/Configuration/memoryCacheEviction``.
public struct MemoryCacheEviction: Sendable {
    /// Makes a cache's policy; `nil` for the least recently used order.
    let makePolicy: (@Sendable () -> any MemoryCacheEvictionPolicy)?

    /// The least recently used entry goes first (LRU): a lookup makes an entry the most recent.
    /// The default, and the cheapest: it asks no policy on any lookup.
    public static let leastRecentlyUsed = MemoryCacheEviction(makePolicy: nil)

    /// The entries `makePolicy`'s policy chooses go first.
    ///
    /// - Parameter makePolicy: Makes a new policy for each cache (and again when the cache is
    ///   emptied with ``MemoryCache/removeAll()``), so that caches never share one.
    /// - Returns: The eviction order.
    public static func custom(_ makePolicy: @escaping @Sendable () -> any MemoryCacheEvictionPolicy) -> MemoryCacheEviction {
        MemoryCacheEviction(makePolicy: makePolicy)
    }
}
