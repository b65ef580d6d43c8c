import Foundation

/// Everything the index knows about one stored entry.
struct EntryRecord: Sendable {
    var key: String
    var id: FileID
    var size: Int
    var checksum: EntryChecksum
    /// Commit time, seconds since the reference date.
    var created: Double
    /// The session that last used the entry (committed or hit it).
    var session: UInt32
    var metadata: FileCacheMetadata
    /// Whether the entry is pinned: kept by the limits, trims and expiry, counted against the
    /// pinned quota instead of the byte and count limits (see `CacheIndex`).
    var pinned = false
}

/// One record of the journal (the persisted index).
///
/// The journal is a sequence of frames `u32 length | u32 CRC-32 of payload | payload`, all
/// little-endian. The first frame is a header; replaying the others in order rebuilds the index,
/// including its LRU order (an `add` or `touch` makes its entry the most recent). A frame that is
/// incomplete or fails its CRC ends the journal: what follows it is ignored and the cache repairs itself.
enum JournalRecord {
    /// First frame: the layout (so a `FileCache` never opens a `BigFileCache` directory) and a
    /// random generation that changes whenever the journal is rewritten.
    case header(layout: UInt8, generation: UInt64)
    /// An entry became visible (replacing any previous version of its key). Type 2 when the entry's
    /// checksum is a CRC-32 (entries written by versions before XXH64), type 8 when it is an XXH64: the
    /// same fields, the checksum 8 bytes instead of 4. (A build older than type 8 reads it as
    /// damage and repairs the cache, as for type 7.) Type 9 for a pinned entry: a flags byte
    /// after the key says it is pinned and which checksum follows. The pin travels in the entry's
    /// own frame, so a commit and its pin are journaled by one append, checked by one CRC: a
    /// crash keeps both or neither. Unpinned entries are still written as types 2 and 8, so a
    /// journal without pins stays readable by builds that predate them.
    case add(EntryRecord)
    /// The entry with this key and version was removed.
    case remove(key: String, version: UInt64)
    /// The entry was used: it becomes the most recent, last used in `session`.
    case touch(key: String, session: UInt32)
    /// The entry's metadata was replaced.
    case metadata(key: String, version: UInt64, metadata: FileCacheMetadata)
    /// A session (one open instance) started.
    case session(UInt32)
    /// The file of the entry with this key and version matched its checksum while it had this
    /// stamp (and the stamp had settled: see `CacheStore.readData`). Lets later instances and
    /// processes skip the checksum of a file that has not changed since.
    case verified(key: String, version: UInt64, stamp: FileStamp)
    /// The entry with this key and version was pinned (`true`) or unpinned after its commit.
    /// (A build that predates pins reads types 9 and 10 as damage, as it would any record type it
    /// does not know: its replay stops there and it repairs the cache, dropping what follows.)
    case pin(key: String, version: UInt64, pinned: Bool)

    /// The flags byte of a type 9 `add`: the entry is pinned.
    static let pinnedFlag: UInt8 = 1
    /// The flags byte of a type 9 `add`: the checksum is a CRC-32 (4 bytes), not an XXH64.
    static let crc32Flag: UInt8 = 2

    /// The payload's first byte.
    var typeCode: UInt8 {
        switch self {
        case .header: 1
        case .add(let entry):
            if entry.pinned {
                9
            } else if case .crc32 = entry.checksum {
                2
            } else {
                8
            }
        case .remove: 3
        case .touch: 4
        case .metadata: 5
        case .session: 6
        case .verified: 7
        case .pin: 10
        }
    }
}
