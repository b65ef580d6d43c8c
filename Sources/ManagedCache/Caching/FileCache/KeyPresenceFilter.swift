import ManagedCacheLocking

/// The keys an index may hold, asked without the cache's mutex: a Bloom filter, two bits per
/// key, over the low 64 bits of each key's digest (the first 128 bits of the SHA-256 of its UTF-8
/// bytes, which the index files entries by: so the filter is rebuilt from the slots, without the
/// keys). "Absent" is certain; "maybe" sends the lookup to the index, as before.
///
/// Why: every new URL that `ObjectManager.manage` sees is looked up in the file cache on the
/// caller's thread, and that lookup waited for the store's mutex, which writers hold across their
/// journal appends and the journal lock. A miss answered here waits for neither.
///
/// Keys are only ever added: a removed entry leaves its bits set (a false "maybe", never a false
/// "absent"). So that such bits do not pile up, the filter is kept in `shardCount` shards by the
/// top byte of the hash (the index's table is sharded the same way, `CacheIndex.shard(of:)`),
/// and the index rebuilds a shard from its own entries once as many keys were added to it as a
/// tenth of its bits (`add` says when); the rebuild sizes it at 16 bits per live key (a power
/// of two, at least 256), where a "maybe" for an absent key is about 1.5 % likely. A shard, not
/// the whole filter: a rebuild then reads a 256th of the entries, never a million at once inside
/// one commit.
///
/// Why a lock and not atomics: `Synchronization.Atomic` needs iOS 18, and the package supports
/// iOS 15. The lock is held for a few word operations, never across anything that can block.
final class KeyPresenceFilter: Sendable {
    private struct Shard {
        var words: [UInt64]
        /// Keys added since the last rebuild (the live ones the rebuild found included).
        var added: Int
        var mask: UInt64 { UInt64(words.count * 64 - 1) }
        var needsRebuild: Bool { added * 10 > words.count * 64 }
    }

    /// How many shards the filter has.
    static let shardCount = 256
    private let shards: Lock<[Shard]>

    /// An empty filter sized for `expectedKeys` keys.
    init(expectedKeys: Int = 0) {
        let shard = Shard(words: Self.emptyWords(forKeys: expectedKeys / Self.shardCount), added: 0)
        shards = Lock(Array(repeating: shard, count: Self.shardCount))
    }

    /// The hash the filter files `key` under: the low word of its digest (`FileID.digestLow`).
    static func hash(_ key: String) -> UInt64 {
        SHA256.first128Bits(key.utf8).low
    }

    /// The shard of `hash`: its top byte. The bits a hash sets within its shard come from its
    /// low 56 bits (`positions`), so the shard's byte takes nothing from them.
    static func shard(of hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 56) }

    /// Notes that the index now holds the key of `hash`. Returns whether the key's shard should
    /// now be rebuilt (`rebuild(shard:fromHashes:count:)`).
    @discardableResult
    func add(hash: UInt64) -> Bool {
        shards.withLock { shards in
            let shard = Self.shard(of: hash)
            Self.set(hash, in: &shards[shard].words, mask: shards[shard].mask)
            shards[shard].added += 1
            return shards[shard].needsRebuild
        }
    }

    /// Whether the index may hold the key of `hash` (false: it certainly does not).
    func mayContain(hash: UInt64) -> Bool {
        shards.withLock { shards in
            let shard = Self.shard(of: hash)
            let (first, second) = Self.positions(hash, mask: shards[shard].mask)
            return shards[shard].words[first >> 6] & (1 << (first & 63)) != 0
                && shards[shard].words[second >> 6] & (1 << (second & 63)) != 0
        }
    }

    /// Sizes the filter for `keys` keys, shard by shard where none was added yet (an opening,
    /// before its replay).
    func reserve(keys: Int) {
        let perShard = keys / Self.shardCount + 1
        shards.withLock { shards in
            for shard in shards.indices where shards[shard].added == 0 && perShard * 16 > shards[shard].words.count * 64 {
                shards[shard].words = Self.emptyWords(forKeys: perShard)
            }
        }
    }

    /// Whether so many keys were added to `shard` since its last rebuild that stale bits may make
    /// "maybe" its usual answer.
    func needsRebuild(shard: Int) -> Bool {
        shards.withLock { $0[shard].needsRebuild }
    }

    /// Replaces the bits of `shard` with those of exactly `hashes` (of the index's live keys in
    /// that shard, `count` of them). The new bits are built before the lock is taken: lookups
    /// meanwhile see the old ones, a superset.
    func rebuild(shard: Int, fromHashes hashes: some Sequence<UInt64>, count: Int) {
        var words = Self.emptyWords(forKeys: count)
        let mask = UInt64(words.count * 64 - 1)
        for hash in hashes { Self.set(hash, in: &words, mask: mask) }
        shards.withLock { $0[shard] = Shard(words: words, added: count) }
    }

    private static func emptyWords(forKeys keys: Int) -> [UInt64] {
        let wanted = max(256, 16 * keys)
        var bitCount = 256
        while bitCount < wanted { bitCount <<= 1 }
        return [UInt64](repeating: 0, count: bitCount / 64)
    }

    /// The two bits of a hash within its shard: its low half and its high half, each reduced by
    /// `mask` (below 2^24: the shard's byte is never among them).
    private static func positions(_ hash: UInt64, mask: UInt64) -> (Int, Int) {
        (Int(hash & mask), Int((hash >> 32 | hash << 32) & mask))
    }

    private static func set(_ hash: UInt64, in words: inout [UInt64], mask: UInt64) {
        let (first, second) = positions(hash, mask: mask)
        words[first >> 6] |= 1 << (first & 63)
        words[second >> 6] |= 1 << (second & 63)
    }
}
