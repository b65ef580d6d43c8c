import Foundation

/// The in-memory index of a cache: entries by key, an LRU list per bucket, totals, and an
/// expiry heap. Plain data, guarded by `CacheStore`'s mutex; nothing here does I/O.
///
/// Pinned entries are apart: they live in a list of their own (`pinnedList`, in use order),
/// never in a bucket's LRU list, never in the expiry heap, and the bucket totals leave them out.
/// So every eviction (which walks the bucket lists) and every expiry (which pops the heap) passes
/// them by at no cost, and the limits are checked against `unpinnedCount` and `unpinnedBytes`.
///
/// Slots live in one array and are linked by index, so a hit moves no memory and allocates nothing.
/// Sendable: a deferred opening builds one outside the mutex and moves it in.
struct CacheIndex: Sendable {
    private(set) var slots: [IndexSlot] = []
    private var freeSlots: [Int32] = []
    private var positions: [IndexKey: Int32] = [:]
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
    private var useCounter: UInt64 = 0
    private var expiries = MinHeap<ExpiryItem>()
    /// Per slot, the file's stamp when its checksum last matched, in this instance or in any
    /// instance that journaled it (see `CacheStore.readData`). Beside the slots rather than in them: few entries are read per
    /// session, and smaller slots make opening a large cache faster.
    private var verifiedStamps: [Int32: FileStamp] = [:]
    /// Per slot, the entry's location once it was looked up (see `EntryLocation`).
    private var locations: [Int32: EntryLocation] = [:]
    let maximumAge: Double?
    /// Every key inserted since the filter was last rebuilt (see `MissShortcut`). Shared with
    /// lookups that do not take the mutex; kept by `removeAll`, so it only ever grows between
    /// rebuilds.
    let presence: KeyPresenceFilter

    init(bucketCount: Int, maximumAge: TimeInterval?, presence: KeyPresenceFilter = KeyPresenceFilter()) {
        buckets = Array(repeating: BucketList(), count: bucketCount)
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
        positions.reserveCapacity(capacity)
        presence.reserve(keys: capacity)
    }

    /// The keys of the live entries, in slot order.
    var liveKeys: some Sequence<String> {
        slots.lazy.filter(\.live).map(\.record.key)
    }

    subscript(_ slot: Int32) -> IndexSlot { slots[Int(slot)] }

    /// The slot of `key`, or nil.
    func find(_ key: String) -> Int32? {
        positions[IndexKey(key)]
    }

    /// When an entry committed at `created` with `metadata` expires if it is not pinned: its own
    /// expiration date, else `created + maximumAge`, else never. (A pinned entry never expires.)
    func expiry(created: Double, metadata: FileCacheMetadata) -> Double {
        if let date = metadata.expirationDate { return date.timeIntervalSinceReferenceDate }
        if let maximumAge { return created + maximumAge }
        return .infinity
    }

    /// Inserts `record` as the most recent entry, replacing any entry of the same key (returned).
    @discardableResult
    mutating func insert(_ record: EntryRecord, bucket: Int, recordBytes size: Int) -> (slot: Int32, replaced: IndexSlot?) {
        let expires = record.pinned ? .infinity : expiry(created: record.created, metadata: record.metadata)
        useCounter += 1
        let slotValue = IndexSlot(
            record: record, expires: expires, useSequence: useCounter, bucket: Int32(bucket),
            newer: -1, older: -1, recordBytes: Int32(clamping: size), live: true,
            touchPending: false)
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[Int(slot)] = slotValue
        } else {
            slot = Int32(slots.count)
            slots.append(slotValue)
        }
        // One hash of the key for both the lookup of a previous version and the insertion.
        var replaced: IndexSlot?
        if let previous = positions.updateValue(slot, forKey: IndexKey(record.key)) {
            replaced = remove(previous, keepingPosition: true)
        }
        linkNewest(slot)
        presence.add(record.key)
        count += 1
        totalBytes += record.size
        recordBytes += size
        addToTotals(slot)
        return (slot, replaced)
    }

    /// Removes the entry in `slot` and returns what it held.
    @discardableResult
    mutating func remove(_ slot: Int32) -> IndexSlot {
        remove(slot, keepingPosition: false)
    }

    /// Removes the entry in `slot`; `keepingPosition` when its key already maps to its successor.
    private mutating func remove(_ slot: Int32, keepingPosition: Bool) -> IndexSlot {
        let removed = slots[Int(slot)]
        precondition(removed.live, "removing a free index slot")
        unlink(slot)
        if !keepingPosition { positions[IndexKey(removed.record.key)] = nil }
        slots[Int(slot)].live = false
        slots[Int(slot)].touchPending = false
        verifiedStamps[slot] = nil
        locations[slot] = nil
        slots[Int(slot)].record.metadata = FileCacheMetadata()
        freeSlots.append(slot)
        count -= 1
        totalBytes -= removed.record.size
        recordBytes -= Int(removed.recordBytes)
        subtractFromTotals(removed)
        if expiries.count > 2 * count + 64 { rebuildExpiries() }
        return removed
    }

    /// Makes the entry the most recent one, last used in `session`.
    mutating func touch(_ slot: Int32, session: UInt32) {
        unlink(slot)
        useCounter += 1
        slots[Int(slot)].useSequence = useCounter
        slots[Int(slot)].record.session = session
        linkNewest(slot)
    }

    /// Pins or unpins the entry: it moves to the other list as its most recent entry (a pin or an
    /// unpin counts as a use, so each list stays in use order), its bytes to the other total, and
    /// its expiry is dropped (pinned) or computed again (unpinned).
    mutating func setPinned(_ slot: Int32, _ pinned: Bool) {
        let old = slots[Int(slot)]
        guard old.live, old.record.pinned != pinned else { return }
        unlink(slot)
        subtractFromTotals(old)
        var record = old.record
        record.pinned = pinned
        slots[Int(slot)].record = record
        slots[Int(slot)].expires = pinned ? .infinity : expiry(created: record.created, metadata: record.metadata)
        let size = JournalEncoder.addRecordSize(record)
        recordBytes += size - Int(old.recordBytes)
        slots[Int(slot)].recordBytes = Int32(clamping: size)
        useCounter += 1
        slots[Int(slot)].useSequence = useCounter
        linkNewest(slot)
        addToTotals(slot)
    }

    /// Counts the entry in `slot` (just linked) in the totals of its list and the expiry heap.
    private mutating func addToTotals(_ slot: Int32) {
        let entry = slots[Int(slot)]
        if entry.record.pinned {
            pinnedCount += 1
            pinnedBytes += entry.record.size
        } else {
            buckets[Int(entry.bucket)].count += 1
            buckets[Int(entry.bucket)].bytes += entry.record.size
        }
        if entry.expires.isFinite {
            expiringCount += 1
            expiries.push(ExpiryItem(expires: entry.expires, slot: slot, version: entry.record.id.version))
        }
    }

    /// Takes `entry` (as it was counted: `addToTotals`) off the totals of its list and the count
    /// of expiring entries. Its expiry-heap item stays: items are checked against their slot when
    /// they come up, and the heap is rebuilt when stale ones outnumber the entries.
    private mutating func subtractFromTotals(_ entry: IndexSlot) {
        if entry.record.pinned {
            pinnedCount -= 1
            pinnedBytes -= entry.record.size
        } else {
            buckets[Int(entry.bucket)].count -= 1
            buckets[Int(entry.bucket)].bytes -= entry.record.size
        }
        if entry.expires.isFinite { expiringCount -= 1 }
    }

    /// Replaces the entry's metadata (and with it its expiry, unless it is pinned).
    mutating func replaceMetadata(_ slot: Int32, with metadata: FileCacheMetadata) {
        let old = slots[Int(slot)]
        var record = old.record
        record.metadata = metadata
        let expires = record.pinned ? .infinity : expiry(created: record.created, metadata: metadata)
        slots[Int(slot)].record = record
        slots[Int(slot)].expires = expires
        let size = JournalEncoder.addRecordSize(record)
        recordBytes += size - Int(old.recordBytes)
        slots[Int(slot)].recordBytes = Int32(clamping: size)
        expiringCount += (expires.isFinite ? 1 : 0) - (old.expires.isFinite ? 1 : 0)
        if expires.isFinite {
            expiries.push(ExpiryItem(expires: expires, slot: slot, version: record.id.version))
        }
    }

    /// Records where the entry's `add` record starts in the journal (its metadata and
    /// verification records, if any, come later).
    mutating func setAddOffset(_ slot: Int32, _ offset: Int) {
        slots[Int(slot)].offsets = JournalOffsets(add: JournalOffsets.stored(offset))
    }

    /// Replaces the entry's journal offsets (after compaction).
    mutating func setOffsets(_ slot: Int32, _ offsets: JournalOffsets) {
        slots[Int(slot)].offsets = offsets
    }

    /// Records where the entry's latest `metadata` record starts in the journal.
    mutating func setMetadataOffset(_ slot: Int32, _ offset: Int) {
        slots[Int(slot)].offsets.metadata = JournalOffsets.stored(offset)
    }

    /// Records where the entry's latest `verified` record starts in the journal.
    mutating func setVerifiedOffset(_ slot: Int32, _ offset: Int) {
        slots[Int(slot)].offsets.verified = JournalOffsets.stored(offset)
    }

    mutating func setTouchPending(_ slot: Int32, _ pending: Bool) {
        slots[Int(slot)].touchPending = pending
    }

    mutating func setVerifiedStamp(_ slot: Int32, _ stamp: FileStamp?) {
        verifiedStamps[slot] = stamp
    }

    /// The entry's location, if it was built before.
    func location(_ slot: Int32) -> EntryLocation? {
        locations[slot]
    }

    mutating func setLocation(_ slot: Int32, _ location: EntryLocation) {
        locations[slot] = location
    }

    /// The stamp of the entry's file when its checksum last matched in this process, or nil.
    func verifiedStamp(_ slot: Int32) -> FileStamp? {
        verifiedStamps[slot]
    }

    /// The slot of the next entry expired at `now` from the expiry heap, or nil.
    mutating func popExpired(now: Double) -> Int32? {
        while let first = expiries.minimum, first.expires <= now {
            expiries.popMinimum()
            let slot = slots[Int(first.slot)]
            if slot.live && slot.record.id.version == first.version && slot.expires == first.expires {
                return first.slot
            }
        }
        return nil
    }

    /// Queues the entry's expiry again (after `popExpired` returned an entry that had to stay).
    mutating func requeueExpiry(_ slot: Int32) {
        let entry = slots[Int(slot)]
        guard entry.live, entry.expires.isFinite else { return }
        expiries.push(ExpiryItem(expires: entry.expires, slot: slot, version: entry.record.id.version))
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
        var result: [Int32] = []
        result.reserveCapacity(count)
        for (index, slot) in slots.enumerated() where slot.live { result.append(Int32(index)) }
        result.sort { slots[Int($0)].useSequence > slots[Int($1)].useSequence }
        return result
    }

    /// Forgets every entry.
    mutating func removeAll() {
        self = CacheIndex(bucketCount: buckets.count, maximumAge: maximumAge, presence: presence)
    }

    private mutating func rebuildExpiries() {
        var items: [ExpiryItem] = []
        items.reserveCapacity(expiringCount)
        for (index, slot) in slots.enumerated() where slot.live && slot.expires.isFinite {
            items.append(ExpiryItem(expires: slot.expires, slot: Int32(index), version: slot.record.id.version))
        }
        expiries = MinHeap(items)
    }

    /// Links the entry as the most recent of its list: the pinned list or its bucket's.
    private mutating func linkNewest(_ slot: Int32) {
        let head = slots[Int(slot)].record.pinned ? pinnedList.newest : buckets[Int(slots[Int(slot)].bucket)].newest
        slots[Int(slot)].newer = -1
        slots[Int(slot)].older = head
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
        if slots[Int(slot)].record.pinned {
            change(&pinnedList)
        } else {
            change(&buckets[Int(slots[Int(slot)].bucket)])
        }
    }
}
