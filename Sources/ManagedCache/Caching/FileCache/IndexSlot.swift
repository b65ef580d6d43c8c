import Foundation

/// Where an entry's file is: its path, for `open(2)` and `FileCacheEntry`, made once per entry
/// and process. No `URL`: building one took about 5 µs on Linux, under the cache's lock, and
/// most entries are read by path alone (`FileCacheEntry.fileURL` makes it when asked).
struct EntryLocation: Sendable {
    let path: String
}

/// One entry in the in-memory index.
struct IndexSlot {
    var record: EntryRecord
    /// When the entry expires (seconds since the reference date), `.infinity` for never.
    var expires: Double
    /// Global use order: higher is more recent. Assigned in replay order, so it survives reopening.
    var useSequence: UInt64
    var bucket: Int32
    /// Neighbours in the bucket's LRU list (towards more recent / less recent), -1 for none.
    var newer: Int32
    var older: Int32
    /// The encoded size of the entry's `add` record.
    var recordBytes: Int32
    var live: Bool
    /// A hit not yet written to the journal.
    var touchPending: Bool
    /// Where the records the entry's lookup depends on start in the current journal.
    var offsets = JournalOffsets()
}

/// Where an entry's `add` record and its latest `metadata` and `verified` records (of the same
/// version) start in the current journal: what the lookup table (`JournalLookupTable`) stores.
struct JournalOffsets: Hashable, Sendable {
    /// `unknown` when the offset does not fit (a journal past 4 GiB) or was not tracked.
    static let unknown = UInt32.max
    var add = JournalOffsets.unknown
    /// 0: no metadata record since the `add` (offset 0 is the header, never one of these).
    var metadata: UInt32 = 0
    /// 0: no verified record since the `add`.
    var verified: UInt32 = 0

    /// `offset` as stored, `unknown` past 4 GiB.
    static func stored(_ offset: Int) -> UInt32 {
        offset >= 0 && offset < Int(unknown) ? UInt32(offset) : unknown
    }
}

/// The LRU list and totals of one bucket.
struct BucketList {
    var newest: Int32 = -1
    var oldest: Int32 = -1
    var count = 0
    var bytes = 0
}
