import Foundation

/// The in-memory index of a cache: entries by their key's digest, an LRU list per bucket, totals,
/// and an expiry heap. Plain data, guarded by `CacheStore`'s mutex; nothing here does I/O.
///
/// Memory: an entry is one `IndexSlot` (52 bytes) in chunks of slots (`IndexSlots`), plus a
/// 32-bit position in an open-addressing table kept at most 80 % full (about 5 bytes an entry
/// once the opening has packed it to three quarters full) and two bits of its shard of the
/// presence filter. Growth is local, so no commit pays for the whole index: the slots grow a
/// chunk at a time, and the table and the presence filter are in 256 shards by the top byte of
/// the digest's low word, each grown or rebuilt on its own (at a million entries, a single
/// array's growth or a whole table's rehash held one commit for 10–30 ms). No key string and no object per entry: the key, checksum,
/// commit time and metadata stay in the entry's journal record, read when a lookup or a rare path
/// needs them (see `StoreState._record`). Beside the slots, and only for the entries that need
/// them: the verified stamps of entries read since their last commit, the commit time of entries
/// that can expire, later metadata records' offsets, and whole records whose offset does not fit.
///
/// Identity by digest: an entry is found by the first 128 bits of the SHA-256 of its key (what
/// names its file). Two keys with one digest share a position, so the later replaces the earlier,
/// as a store of the same key would; a lookup then reads the record and compares the key byte for
/// byte (`StoreState._find`), so a key never gets another key's entry. Finding two keys that agree
/// in 128 bits of SHA-256 takes about 2^64 hash evaluations; by chance, among a million keys, it
/// happens with a probability near 10^-27.
///
/// Pinned entries are apart: they live in a list of their own (`pinnedList`, in use order),
/// never in a bucket's LRU list, never in the expiry heap, and the bucket totals leave them out.
/// So every eviction (which walks the bucket lists) and every expiry (which pops the heap) passes
/// them by at no cost, and the limits are checked against `unpinnedCount` and `unpinnedBytes`.
///
/// Slots are linked by index, so a hit moves no memory and allocates nothing.
/// Sendable: a deferred opening builds one outside the mutex and moves it in.
struct CacheIndex: Sendable {
    /// When an entry that can expire was committed, and its own expiration date, if it has one.
    struct Timing: Sendable {
        var created: Double
        var expirationDate: Double?
    }

    /// An entry's file stamp when its checksum last matched (see `CacheStore.readData`), and
    /// where the `verified` record that says so starts in the journal (0: not journaled yet).
    struct Verification: Sendable {
        var stamp: FileStamp
        var offset: UInt32
    }

    private(set) var slots = IndexSlots()
    private var freeSlots: [Int32] = []
    /// Open addressing by digest, linear probing: a slot number, or -1 for an empty position; in
    /// `shardCount` shards by the top byte of the digest's low word, each grown on its own, so a
    /// growth rehashes a 256th of the entries (a whole table of a million took one commit
    /// 10–20 ms).
    private var shards: [[Int32]]
    /// The entries in each shard.
    private var shardCounts: [Int32]
    static let shardCount = KeyPresenceFilter.shardCount
    private(set) var buckets: [BucketList]
    private(set) var count = 0
    private(set) var totalBytes = 0
    /// Pinned entries among `count`, and their bytes among `totalBytes`.
    private(set) var pinnedCount = 0
    private(set) var pinnedBytes = 0
    /// The pinned entries, linked through their slots' `newer` / `older` like a bucket's list.
    private(set) var pinnedList = BucketList()
    /// The sum of the live entries' `add` record sizes: about what a compacted journal holds.
    private(set) var recordBytes = 0
    /// How many live entries have a finite expiry.
    private(set) var expiringCount = 0
    private var useCounter: UInt32 = 0
    private var expiries = MinHeap<ExpiryItem>()
    private var timings: [Int32: Timing] = [:]
    private var verifications: [Int32: Verification] = [:]
    /// Where an entry's latest `metadata` record starts, for the entries that have one.
    private var metadataOffsets: [Int32: UInt32] = [:]
    /// Whole records of entries whose `add` record lies past 4 GiB in the journal, and metadata
    /// whose record does: what the journal offsets cannot point at.
    private var detachedRecords: [Int32: EntryRecord] = [:]
    private var detachedMetadata: [Int32: FileCacheMetadata] = [:]
    let maximumAge: Double?
    /// The digests of every key inserted since the filter was last rebuilt (see `MissShortcut`).
    /// Shared with lookups that do not take the mutex; kept by `removeAll`, so it only ever
    /// grows between rebuilds.
    let presence: KeyPresenceFilter

    /// The table is grown when more than this fraction of it is in use...
    private static let maximumLoad = 0.8
    /// ...to this fraction; `pack()` sets it to `packedLoad`.
    private static let grownLoad = 0.6
    private static let packedLoad = 0.75

    init(bucketCount: Int, maximumAge: TimeInterval?, presence: KeyPresenceFilter = KeyPresenceFilter()) {
        buckets = Array(repeating: BucketList(), count: bucketCount)
        shards = Array(repeating: [], count: Self.shardCount)
        shardCounts = Array(repeating: 0, count: Self.shardCount)
        self.maximumAge = maximumAge
        self.presence = presence
    }

    /// The entries the byte and count limits apply to: those not pinned.
    var unpinnedCount: Int { count - pinnedCount }
    /// The bytes the byte limit applies to: those of the entries not pinned.
    var unpinnedBytes: Int { totalBytes - pinnedBytes }

    /// Prepares for `capacity` entries (at open, from the journal's size).
    mutating func reserve(_ capacity: Int) {
        slots.reserveCapacity(capacity)
        let perShard = capacity / Self.shardCount + 1
        for shard in 0..<Self.shardCount where Double(perShard) > Double(shards[shard].count) * Self.maximumLoad {
            rebuildShard(shard, capacity: Int(Double(perShard) / Self.grownLoad))
        }
        presence.reserve(keys: capacity)
    }

    /// Gives back what `reserve` or growth left unused (after an opening's replay): each shard of
    /// the table three quarters full.
    mutating func pack() {
        if freeSlots.capacity > freeSlots.count * 2 + 16 { freeSlots = Array(freeSlots) }
        for shard in 0..<Self.shardCount {
            shards[shard] = [Int32](repeating: -1, count: max(16, Int(Double(shardCounts[shard]) / Self.packedLoad) + 1))
            shardCounts[shard] = 0
        }
        // In slot order: the slots are read one after another, not in the shards' random order.
        for slot in slots.indices where slots[slot].live { place(Int32(slot)) }
    }

    /// The live slots, in slot order.
    var liveSlots: some Sequence<Int32> {
        slots.indices.lazy.filter { slots[$0].live }.map { Int32($0) }
    }

    subscript(_ slot: Int32) -> IndexSlot { slots[Int(slot)] }

    /// The slot whose digest is `key`'s, or nil. The caller compares the key when it matters
    /// (two keys can share a digest: see the type's comment).
    func find(_ key: String) -> Int32? {
        let digest = SHA256.first128Bits(key.utf8)
        return find(digestHigh: digest.high, digestLow: digest.low)
    }

    /// The slot with this digest, or nil.
    func find(digestHigh: UInt64, digestLow: UInt64) -> Int32? {
        return shards[Self.shard(of: digestLow)].withUnsafeBufferPointer { table -> Int32? in
            guard !table.isEmpty else { return nil }
            var position = Self.home(digestLow, size: table.count)
            while true {
                let slot = table[position]
                if slot < 0 { return nil }
                if slots[Int(slot)].has(digestHigh: digestHigh, digestLow: digestLow) { return slot }
                position += 1
                if position == table.count { position = 0 }
            }
        }
    }

    /// Which bucket the entry in `slot` belongs to.
    func bucket(of slot: Int32) -> Int { slots[Int(slot)].id.bucket(of: buckets.count) }

    /// When an entry committed at `created` with `metadata` expires if it is not pinned: its own
    /// expiration date, else `created + maximumAge`, else never. (A pinned entry never expires.)
    func expiry(created: Double, metadata: FileCacheMetadata) -> Double {
        if let date = metadata.expirationDate { return date.timeIntervalSinceReferenceDate }
        if let maximumAge { return created + maximumAge }
        return .infinity
    }

    /// When the entry in `slot` expires (`.infinity`: never).
    func expires(_ slot: Int32) -> Double {
        guard !slots[Int(slot)].pinned, let timing = timings[slot] else { return .infinity }
        if let date = timing.expirationDate { return date }
        if let maximumAge { return timing.created + maximumAge }
        return .infinity
    }

    /// Inserts `record` as the most recent entry, replacing any entry of the same digest
    /// (returned). `addOffset` is where its `add` record of `recordBytes` starts in the journal.
    @discardableResult
    mutating func insert(_ record: EntryRecord, recordBytes size: Int, addOffset: Int) -> (slot: Int32, replaced: IndexSlot?) {
        if useCounter == .max { renumberUses() }
        useCounter += 1
        let stored = JournalOffsets.stored(addOffset)
        let slotValue = IndexSlot(record: record, useSequence: useCounter, recordBytes: size, addOffset: stored)
        var replaced: IndexSlot?
        if let previous = find(digestHigh: record.id.digestHigh, digestLow: record.id.digestLow) {
            replaced = remove(previous)
        }
        let shard = Self.shard(of: record.id.digestLow)
        if Double(shardCounts[shard] + 1) > Double(shards[shard].count) * Self.maximumLoad {
            rebuildShard(shard, capacity: max(16, Int(Double(shardCounts[shard] + 1) / Self.grownLoad)))
        }
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[Int(slot)] = slotValue
        } else {
            slot = Int32(slots.count)
            slots.append(slotValue)
        }
        place(slot)
        if stored == JournalOffsets.unknown { detachedRecords[slot] = record }
        if maximumAge != nil || record.metadata.expirationDate != nil {
            timings[slot] = Timing(created: record.created, expirationDate: record.metadata.expirationDate?.timeIntervalSinceReferenceDate)
        }
        linkNewest(slot)
        if presence.add(hash: record.id.digestLow) {
            presence.rebuild(
                shard: shard, fromHashes: slots(inShard: shard).map { slots[Int($0)].digestLow }, count: Int(shardCounts[shard]))
        }
        count += 1
        totalBytes += slotValue.size
        recordBytes += size
        addToTotals(slot)
        return (slot, replaced)
    }

    /// Removes the entry in `slot` and returns what it held.
    @discardableResult
    mutating func remove(_ slot: Int32) -> IndexSlot {
        let removed = slots[Int(slot)]
        precondition(removed.live, "removing a free index slot")
        let expiring = expires(slot).isFinite
        unlink(slot)
        displace(slot)
        slots[Int(slot)].live = false
        slots[Int(slot)].touchPending = false
        timings[slot] = nil
        verifications[slot] = nil
        metadataOffsets[slot] = nil
        detachedRecords[slot] = nil
        detachedMetadata[slot] = nil
        freeSlots.append(slot)
        count -= 1
        totalBytes -= removed.size
        recordBytes -= Int(removed.recordBytes)
        subtractFromTotals(removed, expiring: expiring)
        if expiries.count > 2 * count + 64 { rebuildExpiries() }
        return removed
    }

    /// Makes the entry the most recent one, last used in `session`.
    mutating func touch(_ slot: Int32, session: UInt32) {
        unlink(slot)
        if useCounter == .max { renumberUses() }
        useCounter += 1
        slots[Int(slot)].useSequence = useCounter
        slots[Int(slot)].session = session
        linkNewest(slot)
    }

    /// Pins or unpins the entry: it moves to the other list as its most recent entry (a pin or an
    /// unpin counts as a use, so each list stays in use order), its bytes to the other total, and
    /// its expiry is dropped (pinned) or computed again (unpinned). A pinned `add` record is one
    /// byte longer (its flags byte).
    mutating func setPinned(_ slot: Int32, _ pinned: Bool) {
        let old = slots[Int(slot)]
        guard old.live, old.pinned != pinned else { return }
        let wasExpiring = expires(slot).isFinite
        unlink(slot)
        subtractFromTotals(old, expiring: wasExpiring)
        slots[Int(slot)].pinned = pinned
        let size = Int(old.recordBytes) + (pinned ? 1 : -1)
        recordBytes += size - Int(old.recordBytes)
        slots[Int(slot)].recordBytes = UInt16(clamping: size)
        if useCounter == .max { renumberUses() }
        useCounter += 1
        slots[Int(slot)].useSequence = useCounter
        linkNewest(slot)
        addToTotals(slot)
    }

    /// Counts the entry in `slot` (just linked) in the totals of its list and the expiry heap.
    private mutating func addToTotals(_ slot: Int32) {
        let entry = slots[Int(slot)]
        if entry.pinned {
            pinnedCount += 1
            pinnedBytes += entry.size
        } else {
            let bucket = bucket(of: slot)
            buckets[bucket].count += 1
            buckets[bucket].bytes += entry.size
        }
        let expires = expires(slot)
        if expires.isFinite {
            expiringCount += 1
            expiries.push(ExpiryItem(expires: expires, slot: slot, version: entry.version))
        }
    }

    /// Takes `entry` (as it was counted: `addToTotals`) off the totals of its list and the count
    /// of expiring entries. Its expiry-heap item stays: items are checked against their slot when
    /// they come up, and the heap is rebuilt when stale ones outnumber the entries.
    private mutating func subtractFromTotals(_ entry: IndexSlot, expiring: Bool) {
        if entry.pinned {
            pinnedCount -= 1
            pinnedBytes -= entry.size
        } else {
            let bucket = entry.id.bucket(of: buckets.count)
            buckets[bucket].count -= 1
            buckets[bucket].bytes -= entry.size
        }
        if expiring { expiringCount -= 1 }
    }

    /// Replaces the entry's metadata (and with it its expiry, unless it is pinned): its
    /// `metadata` record of the entry starts at `offset` in the journal, and the entry's `add`
    /// record would now take `recordBytes`.
    mutating func replaceMetadata(_ slot: Int32, with metadata: FileCacheMetadata, recordBytes size: Int, offset: Int) {
        let wasExpiring = expires(slot).isFinite
        let date = metadata.expirationDate?.timeIntervalSinceReferenceDate
        if maximumAge != nil || date != nil {
            let created = timings[slot]?.created ?? 0
            timings[slot] = Timing(created: created, expirationDate: date)
        } else {
            timings[slot] = nil
        }
        let stored = JournalOffsets.stored(offset)
        if detachedRecords[slot] != nil {
            detachedRecords[slot]?.metadata = metadata
        } else if stored == JournalOffsets.unknown {
            detachedMetadata[slot] = metadata
        } else {
            metadataOffsets[slot] = stored
            detachedMetadata[slot] = nil
        }
        let old = Int(slots[Int(slot)].recordBytes)
        recordBytes += size - old
        slots[Int(slot)].recordBytes = UInt16(clamping: size)
        let expires = expires(slot)
        expiringCount += (expires.isFinite ? 1 : 0) - (wasExpiring ? 1 : 0)
        if expires.isFinite {
            expiries.push(ExpiryItem(expires: expires, slot: slot, version: slots[Int(slot)].version))
        }
    }

    /// Where the entry's records start in the journal.
    func offsets(_ slot: Int32) -> JournalOffsets {
        JournalOffsets(add: slots[Int(slot)].addOffset, metadata: metadataOffsets[slot] ?? 0, verified: verifications[slot]?.offset ?? 0)
    }

    /// Replaces the entry's journal offsets (after compaction, which writes its metadata into its
    /// `add` record).
    /// `record`: the whole record, kept beside when `offsets.add` is unknown.
    mutating func setOffsets(_ slot: Int32, _ offsets: JournalOffsets, record: EntryRecord?) {
        slots[Int(slot)].addOffset = offsets.add
        metadataOffsets[slot] = nil
        detachedMetadata[slot] = nil
        detachedRecords[slot] = offsets.add == JournalOffsets.unknown ? record : nil
        verifications[slot]?.offset = offsets.verified
    }

    /// The whole record of an entry whose `add` record the journal offsets cannot point at.
    func detachedRecord(_ slot: Int32) -> EntryRecord? { detachedRecords[slot] }

    /// The metadata of an entry whose latest `metadata` record the offsets cannot point at.
    func detachedMetadata(_ slot: Int32) -> FileCacheMetadata? { detachedMetadata[slot] }

    mutating func setTouchPending(_ slot: Int32, _ pending: Bool) {
        slots[Int(slot)].touchPending = pending
    }

    /// Remembers the stamp of the entry's file when its checksum last matched (nil: forget it),
    /// and where its `verified` record starts in the journal (0: not journaled yet).
    mutating func setVerified(_ slot: Int32, _ stamp: FileStamp?, offset: Int = 0) {
        verifications[slot] = stamp.map { Verification(stamp: $0, offset: offset == 0 ? 0 : JournalOffsets.stored(offset)) }
    }

    /// Records where the entry's (already remembered) `verified` record starts in the journal.
    mutating func setVerifiedOffset(_ slot: Int32, _ offset: Int) {
        verifications[slot]?.offset = JournalOffsets.stored(offset)
    }

    /// The stamp of the entry's file when its checksum last matched, or nil.
    func verifiedStamp(_ slot: Int32) -> FileStamp? {
        verifications[slot]?.stamp
    }

    /// The slot of the next entry expired at `now` from the expiry heap, or nil.
    mutating func popExpired(now: Double) -> Int32? {
        while let first = expiries.minimum, first.expires <= now {
            expiries.popMinimum()
            let slot = slots[Int(first.slot)]
            if slot.live && slot.version == first.version && expires(first.slot) == first.expires {
                return first.slot
            }
        }
        return nil
    }

    /// Queues the entry's expiry again (after `popExpired` returned an entry that had to stay).
    mutating func requeueExpiry(_ slot: Int32) {
        let entry = slots[Int(slot)]
        let expires = expires(slot)
        guard entry.live, expires.isFinite else { return }
        expiries.push(ExpiryItem(expires: expires, slot: slot, version: entry.version))
    }

    /// The least recently used entry of `bucket`, or -1.
    func oldest(inBucket bucket: Int) -> Int32 { buckets[bucket].oldest }

    /// The most recently used entry of `bucket`, or -1.
    func newest(inBucket bucket: Int) -> Int32 { buckets[bucket].newest }

    /// The pinned entries, most recently used first.
    func pinnedSlots() -> [Int32] {
        var result: [Int32] = []
        result.reserveCapacity(pinnedCount)
        var slot = pinnedList.newest
        while slot >= 0 {
            result.append(slot)
            slot = slots[Int(slot)].older
        }
        return result
    }

    /// Every live slot, most recently used first.
    func slotsByRecency() -> [Int32] {
        if buckets.count == 1 {
            // The bucket's list and the pinned list, each in use order, merged.
            var result: [Int32] = []
            result.reserveCapacity(count)
            var slot = buckets[0].newest
            var pinned = pinnedList.newest
            while slot >= 0 || pinned >= 0 {
                if pinned >= 0 && (slot < 0 || slots[Int(pinned)].useSequence > slots[Int(slot)].useSequence) {
                    result.append(pinned)
                    pinned = slots[Int(pinned)].older
                } else {
                    result.append(slot)
                    slot = slots[Int(slot)].older
                }
            }
            return result
        }
        var result = Array(liveSlots)
        result.sort { slots[Int($0)].useSequence > slots[Int($1)].useSequence }
        return result
    }

    /// Forgets every entry.
    mutating func removeAll() {
        self = CacheIndex(bucketCount: buckets.count, maximumAge: maximumAge, presence: presence)
    }

    /// Numbers the live entries' uses again from 1, in the same order (when the 32-bit counter is
    /// spent: after four billion commits and hits).
    private mutating func renumberUses() {
        let order = slotsByRecency()
        for (rank, slot) in order.reversed().enumerated() { slots[Int(slot)].useSequence = UInt32(rank + 1) }
        useCounter = UInt32(order.count)
    }

    private mutating func rebuildExpiries() {
        var items: [ExpiryItem] = []
        items.reserveCapacity(expiringCount)
        for slot in liveSlots {
            let expires = expires(slot)
            if expires.isFinite { items.append(ExpiryItem(expires: expires, slot: slot, version: slots[Int(slot)].version)) }
        }
        expiries = MinHeap(items)
    }

    // MARK: The table

    /// The shard of the table an entry with this digest's low word is in: its top byte.
    static func shard(of digestLow: UInt64) -> Int { KeyPresenceFilter.shard(of: digestLow) }

    /// Where the entry with this digest's low word is looked for first in its shard of `size`
    /// positions: the word's bits below the shard's byte, scaled to the size (the digest is
    /// uniform, so any size works).
    private static func home(_ digestLow: UInt64, size: Int) -> Int {
        Int(truncatingIfNeeded: (digestLow << 8).multipliedFullWidth(by: UInt64(size)).high)
    }

    /// Puts `slot` (not in the table) at the first free position from its home in its shard.
    private mutating func place(_ slot: Int32) {
        let digestLow = slots[Int(slot)].digestLow
        let shard = Self.shard(of: digestLow)
        shards[shard].withUnsafeMutableBufferPointer { table in
            var position = Self.home(digestLow, size: table.count)
            while table[position] >= 0 {
                position += 1
                if position == table.count { position = 0 }
            }
            table[position] = slot
        }
        shardCounts[shard] += 1
    }

    /// Takes `slot` out of the table, moving back the entries after it that would otherwise no
    /// longer be found (linear probing's deletion, no tombstones).
    private mutating func displace(_ slot: Int32) {
        let digestLow = slots[Int(slot)].digestLow
        let shard = Self.shard(of: digestLow)
        let size = shards[shard].count
        var hole = Self.home(digestLow, size: size)
        while shards[shard][hole] != slot {
            hole += 1
            if hole == size { hole = 0 }
        }
        var next = hole
        while true {
            next += 1
            if next == size { next = 0 }
            let moving = shards[shard][next]
            if moving < 0 { break }
            let wanted = Self.home(slots[Int(moving)].digestLow, size: size)
            // `moving` may fill the hole unless its home lies cyclically in (hole, next].
            let stays = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if stays { continue }
            shards[shard][hole] = moving
            hole = next
        }
        shards[shard][hole] = -1
        shardCounts[shard] -= 1
    }

    /// Makes `shard` `capacity` positions long (at least one more than its entries) and places
    /// its entries again.
    private mutating func rebuildShard(_ shard: Int, capacity: Int) {
        let entries = shards[shard]
        shards[shard] = [Int32](repeating: -1, count: max(capacity, Int(shardCounts[shard]) + 1))
        shardCounts[shard] = 0
        for slot in entries where slot >= 0 { place(slot) }
    }

    /// The slots of the entries in `shard`, in no order.
    func slots(inShard shard: Int) -> some Sequence<Int32> {
        shards[shard].lazy.filter { $0 >= 0 }
    }

    // MARK: The lists

    /// Links the entry as the most recent of its list: the pinned list or its bucket's.
    private mutating func linkNewest(_ slot: Int32) {
        var entry = slots[Int(slot)]
        let head = entry.pinned ? pinnedList.newest : buckets[entry.id.bucket(of: buckets.count)].newest
        entry.newer = -1
        entry.older = head
        slots[Int(slot)] = entry
        if head >= 0 { slots[Int(head)].newer = slot }
        updateEnds(of: slot) { list in
            if head < 0 { list.oldest = slot }
            list.newest = slot
        }
    }

    /// Takes the entry out of its list.
    private mutating func unlink(_ slot: Int32) {
        let newer = slots[Int(slot)].newer
        let older = slots[Int(slot)].older
        if newer >= 0 { slots[Int(newer)].older = older }
        if older >= 0 { slots[Int(older)].newer = newer }
        updateEnds(of: slot) { list in
            if newer < 0 { list.newest = older }
            if older < 0 { list.oldest = newer }
        }
        slots[Int(slot)].newer = -1
        slots[Int(slot)].older = -1
    }

    /// Changes the ends of the list `slot` belongs to.
    private mutating func updateEnds(of slot: Int32, _ change: (inout BucketList) -> Void) {
        if slots[Int(slot)].pinned {
            change(&pinnedList)
        } else {
            change(&buckets[bucket(of: slot)])
        }
    }
}
