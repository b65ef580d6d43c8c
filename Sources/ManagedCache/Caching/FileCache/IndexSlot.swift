import Foundation

/// Where an entry's file is: its path, for `open(2)` and `FileCacheEntry`. No `URL`: building one
/// took about 5 µs on Linux, under the cache's lock, and most entries are read by path alone
/// (`FileCacheEntry.fileURL` makes it when asked).
struct EntryLocation: Sendable {
    let path: String
}

/// One entry in the in-memory index: 52 bytes, no reference, nothing allocated per entry.
///
/// What a slot holds is what the index itself decides with: the key's digest (its identity in the
/// index, and with the version the file's name), the size (the limits), the recency (the LRU
/// lists and the use order), the session (the preload queries), where the entry's `add` record
/// starts in the journal and a few flags. What only a read or a rare path needs (the key itself,
/// the checksum, the commit time, the metadata) is in that `add` record, and `StoreState` reads it
/// from the journal when it needs it (see `StoreState._record`). Every field is 32 bits or less,
/// so the slots pack without padding.
struct IndexSlot: Sendable {
    private var digest0: UInt32
    private var digest1: UInt32
    private var digest2: UInt32
    private var digest3: UInt32
    private var version0: UInt32
    private var version1: UInt32
    private var sizeLow: UInt32
    /// Neighbours in the bucket's (or the pinned) LRU list, towards more recent / less recent; -1 for none.
    var newer: Int32 = -1
    var older: Int32 = -1
    /// Use order: higher is more recent. Assigned in replay order, so it survives reopening.
    var useSequence: UInt32
    /// The session that last used the entry (committed or hit it).
    var session: UInt32
    /// Where the entry's `add` record starts in the journal the instance has open
    /// (`JournalOffsets.unknown`: past 4 GiB; the index then keeps the whole record beside).
    var addOffset: UInt32
    /// The encoded size of the entry's `add` record, clamped to 65,535 (it only decides when the
    /// journal is compacted).
    var recordBytes: UInt16
    private var sizeHigh: UInt8
    private var flags: UInt8

    private static let liveFlag: UInt8 = 1
    private static let touchPendingFlag: UInt8 = 2
    private static let pinnedFlag: UInt8 = 4
    private static let crc32Flag: UInt8 = 8

    /// The largest entry size a slot holds (40 bits: a terabyte).
    static let maximumSize = (1 << 40) - 1

    init(record: EntryRecord, useSequence: UInt32, recordBytes: Int, addOffset: UInt32) {
        digest0 = UInt32(truncatingIfNeeded: record.id.digestHigh >> 32)
        digest1 = UInt32(truncatingIfNeeded: record.id.digestHigh)
        digest2 = UInt32(truncatingIfNeeded: record.id.digestLow >> 32)
        digest3 = UInt32(truncatingIfNeeded: record.id.digestLow)
        version0 = UInt32(truncatingIfNeeded: record.id.version >> 32)
        version1 = UInt32(truncatingIfNeeded: record.id.version)
        let size = min(max(record.size, 0), Self.maximumSize)
        sizeLow = UInt32(truncatingIfNeeded: size)
        sizeHigh = UInt8(truncatingIfNeeded: size >> 32)
        self.useSequence = useSequence
        session = record.session
        self.addOffset = addOffset
        self.recordBytes = UInt16(clamping: recordBytes)
        flags = Self.liveFlag
        if record.pinned { flags |= Self.pinnedFlag }
        if case .crc32 = record.checksum { flags |= Self.crc32Flag }
    }

    var digestHigh: UInt64 { UInt64(digest0) << 32 | UInt64(digest1) }
    var digestLow: UInt64 { UInt64(digest2) << 32 | UInt64(digest3) }
    var version: UInt64 { UInt64(version0) << 32 | UInt64(version1) }
    /// The identity of the entry's file.
    var id: FileID { FileID(digestHigh: digestHigh, digestLow: digestLow, version: version) }
    var size: Int { Int(sizeHigh) << 32 | Int(sizeLow) }

    /// Whether the digest is `digest`.
    func has(digestHigh high: UInt64, digestLow low: UInt64) -> Bool {
        digestHigh == high && digestLow == low
    }

    var live: Bool {
        get { flags & Self.liveFlag != 0 }
        set { set(Self.liveFlag, newValue) }
    }
    /// A hit not yet written to the journal.
    var touchPending: Bool {
        get { flags & Self.touchPendingFlag != 0 }
        set { set(Self.touchPendingFlag, newValue) }
    }
    var pinned: Bool {
        get { flags & Self.pinnedFlag != 0 }
        set { set(Self.pinnedFlag, newValue) }
    }
    /// Whether the entry's checksum is a CRC-32 (an entry of a version before XXH64): its `add`
    /// record is 4 bytes shorter.
    var checksumIsCRC32: Bool { flags & Self.crc32Flag != 0 }

    private mutating func set(_ flag: UInt8, _ on: Bool) {
        if on { flags |= flag } else { flags &= ~flag }
    }
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
struct BucketList: Sendable {
    var newest: Int32 = -1
    var oldest: Int32 = -1
    var count = 0
    var bytes = 0
}

/// The index's slots, in chunks of `chunkSize`: a slot's number is its position, and it never
/// moves. An array of a million slots that doubled as it grew copied 27 MB inside one commit
/// (a store of 20–30 ms); a chunked one adds a chunk, whatever its size.
struct IndexSlots: RandomAccessCollection, MutableCollection, Sendable {
    /// 4,096 slots: about 210 KB a chunk.
    static let chunkShift = 12
    static let chunkSize = 1 << chunkShift

    private var chunks: [[IndexSlot]] = []
    private(set) var count = 0

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> IndexSlot {
        @inline(__always) get { chunks[position &>> Self.chunkShift][position & (Self.chunkSize - 1)] }
        @inline(__always) _modify { yield &chunks[position &>> Self.chunkShift][position & (Self.chunkSize - 1)] }
        @inline(__always) set { chunks[position &>> Self.chunkShift][position & (Self.chunkSize - 1)] = newValue }
    }

    /// Adds `slot` as the last one.
    mutating func append(_ slot: IndexSlot) {
        if count & (Self.chunkSize - 1) == 0 {
            var chunk: [IndexSlot] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(slot)
        count += 1
    }

    /// Prepares the list of chunks for `capacity` slots (the chunks themselves are made as needed).
    mutating func reserveCapacity(_ capacity: Int) {
        chunks.reserveCapacity((capacity + Self.chunkSize - 1) / Self.chunkSize)
    }
}
