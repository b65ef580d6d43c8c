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
/// "absent"). So that such bits do not pile up, `CacheStore` rebuilds the filter from the index
/// once as many keys were added as a tenth of its bits; the rebuild sizes it at 16 bits per live
/// key (a power of two, at least 1,024), where a "maybe" for an absent key is about 1.5 % likely.
///
/// Why a lock and not atomics: `Synchronization.Atomic` needs iOS 18, and the package supports
/// iOS 15. The lock is held for a few word operations, never across anything that can block.
final class KeyPresenceFilter: Sendable {
    private struct Bits {
        var words: [UInt64]
        /// Keys added since the last rebuild (the live ones the rebuild found included).
        var added: Int
        var mask: UInt64 { UInt64(words.count * 64 - 1) }
    }

    private let bits: Lock<Bits>

    /// An empty filter sized for `expectedKeys` keys.
    init(expectedKeys: Int = 0) {
        bits = Lock(Bits(words: Self.emptyWords(forKeys: expectedKeys), added: 0))
    }

    /// The hash the filter files `key` under: the low word of its digest (`FileID.digestLow`).
    static func hash(_ key: String) -> UInt64 {
        SHA256.first128Bits(key.utf8).low
    }

    /// Notes that the index now holds the key of `hash`.
    func add(hash: UInt64) {
        bits.withLock { bits in
            Self.set(hash, in: &bits.words, mask: bits.mask)
            bits.added += 1
        }
    }

    /// Whether the index may hold the key of `hash` (false: it certainly does not).
    func mayContain(hash: UInt64) -> Bool {
        bits.withLock { bits in
            let (first, second) = Self.positions(hash, mask: bits.mask)
            return bits.words[first >> 6] & (1 << (first & 63)) != 0 && bits.words[second >> 6] & (1 << (second & 63)) != 0
        }
    }

    /// Sizes the filter for `keys` keys, if none was added yet (an opening, before its replay).
    func reserve(keys: Int) {
        bits.withLock { bits in
            guard bits.added == 0, keys * 16 > bits.words.count * 64 else { return }
            bits.words = Self.emptyWords(forKeys: keys)
        }
    }

    /// Whether so many keys were added since the last rebuild that stale bits may make "maybe"
    /// the usual answer.
    var needsRebuild: Bool {
        bits.withLock { $0.added * 10 > $0.words.count * 64 }
    }

    /// Replaces the bits with those of exactly `hashes` (of the index's live keys, `count` of
    /// them). The new bits are built before the lock is taken: lookups meanwhile see the old ones,
    /// a superset.
    func rebuild(fromHashes hashes: some Sequence<UInt64>, count: Int) {
        var words = Self.emptyWords(forKeys: count)
        let mask = UInt64(words.count * 64 - 1)
        for hash in hashes { Self.set(hash, in: &words, mask: mask) }
        bits.withLock { $0 = Bits(words: words, added: count) }
    }

    private static func emptyWords(forKeys keys: Int) -> [UInt64] {
        let wanted = max(1_024, 16 * keys)
        var bitCount = 1_024
        while bitCount < wanted { bitCount <<= 1 }
        return [UInt64](repeating: 0, count: bitCount / 64)
    }

    /// The two bits of a hash: its low half and its high half, each reduced by `mask`.
    private static func positions(_ hash: UInt64, mask: UInt64) -> (Int, Int) {
        (Int(hash & mask), Int((hash >> 32 | hash << 32) & mask))
    }

    private static func set(_ hash: UInt64, in words: inout [UInt64], mask: UInt64) {
        let (first, second) = positions(hash, mask: mask)
        words[first >> 6] |= 1 << (first & 63)
        words[second >> 6] |= 1 << (second & 63)
    }
}
