import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where each live key's records start in a journal's first `covered` bytes: a hash table beside
/// the journal (`journal.lookup`) that lets a lookup made before the replay has finished read a
/// few frames instead of walking the whole journal.
///
/// It is a hint, never the truth: every frame it points at is read and checked (its checksum,
/// its type, the key byte for byte, the version) before it is believed, and a key it does not
/// list is looked for by the ordinary scan or waits for the replay. What it describes cannot go
/// stale: it names one journal (the generation in the journal's header, drawn anew by every
/// compaction) and a prefix of it, and a journal's bytes before its end never change (see
/// `JournalSnapshot`). Written at compaction and when the last open instance closes, to a
/// temporary file renamed over the old one, without `fsync`: a table lost or torn by a power
/// failure only sends lookups back to the scan.
///
/// It also answers misses before the replay has finished (`JournalSnapshot.find`): it lists every
/// key live in the prefix it covers (an entry's `add` offset is always known below 4 GiB, and no
/// table is written past that), so a key it does not list had no entry there. That answer is
/// only as good as the bytes of the slots the lookup probed, so the table carries a checksum of
/// every region of `regionSlots` slots, checked once each, by the first miss that probes the
/// region (`slotsAreIntact(from:count:)`): a table torn by a power failure, or damaged since,
/// answers no miss from a damaged region (hits check their frames anyway). Regions, not the
/// whole table: at a million entries, checking every slot at the first miss took 6–10 ms, and a
/// miss during the opening must not wait more than a millisecond.
///
/// Format (little-endian): `"MCLT"`, format version (u32, 3), the journal's generation (u64),
/// the prefix's length (u64), the slot count N (u64, a power of two), XXH64 of the regions'
/// checksums (u64), XXH64 of those 40 bytes (u64); then N slots of 16 bytes: tag (u32, 0 for an
/// empty slot), offsets of the `add`, the latest `metadata` (0: none) and the latest `verified`
/// (0: none) record (u32 each); then the XXH64 of each region of `regionSlots` slots (u64 each,
/// fewer slots in a table smaller than one region). A key's XXH64 gives its tag (low 32 bits,
/// lowest bit set) and its first slot (high bits); collisions go to the next slots (linear
/// probing). A table of an earlier format (1: no checksum of its slots; 2: one checksum of all
/// of them) is not opened: the next closing or compaction writes format 3.
final class JournalLookupTable: @unchecked Sendable {
    // Safe to be Sendable: immutable after `init` but for `checkedRegions`, behind its lock; a
    // private read-only mapping unmapped in `deinit`.

    /// The file's name in the cache's root.
    static let fileName = "journal.lookup"
    private static let magic: UInt32 = 0x544C_434D  // "MCLT"
    private static let formatVersion: UInt32 = 3
    /// Where the slots start (the tests damage them).
    static let headerSize = 48
    private static let slotSize = 16
    /// Slots a region checksum covers: 64 KiB, about 10 µs to check.
    static let regionSlots = 4_096

    /// The journal this table describes.
    let generation: UInt64
    /// How many of the journal's first bytes it describes.
    let covered: Int
    /// How many slots the table has (a power of two).
    let slotCount: Int
    private let bytes: UnsafeRawBufferPointer
    /// The XXH64 of the regions' checksums the header records.
    private let regionsChecksum: UInt64
    /// What is known of the regions: nil until the regions' checksums were checked against
    /// `regionsChecksum`, then whether they matched, and per region whether its slots were
    /// checked and matched (nil: not checked yet).
    private let checkedRegions = Lock<(intact: Bool, regions: [Bool?])?>(nil)

    private init(generation: UInt64, covered: Int, slotCount: Int, regionsChecksum: UInt64, bytes: UnsafeRawBufferPointer) {
        self.generation = generation
        self.covered = covered
        self.slotCount = slotCount
        self.regionsChecksum = regionsChecksum
        self.bytes = bytes
    }

    /// Slots in each region of a table of `slotCount` slots.
    private static func regionSize(slotCount: Int) -> Int { min(regionSlots, slotCount) }

    /// The size of a table file of `slotCount` slots.
    private static func fileSize(slotCount: Int) -> Int {
        headerSize + slotCount * slotSize + slotCount / regionSize(slotCount: slotCount) * 8
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
    }

    /// The table at `path` if it describes the journal of `generation` within its first
    /// `journalSize` bytes; nil otherwise (none, another journal, damaged header).
    static func open(_ path: String, generation: UInt64, journalSize: Int) -> JournalLookupTable? {
        let descriptor = Posix.openFile(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { Posix.closeFile(descriptor) }
        guard let info = Posix.status(of: descriptor), Int(info.st_size) >= headerSize else { return nil }
        let size = Int(info.st_size)
        // MAP_FAILED is (void *)-1, which not every platform's overlay imports.
        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != failed else { return nil }
        let bytes = UnsafeRawBufferPointer(start: mapping, count: size)
        func u32(_ offset: Int) -> UInt32 { UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
        func u64(_ offset: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        let covered = u64(16)
        let slotCount = u64(24)
        guard u32(0) == magic, u32(4) == formatVersion, u64(40) == XXH64.hash(UnsafeRawBufferPointer(rebasing: bytes[0..<40])),
            u64(8) == generation, covered <= UInt64(journalSize), slotCount > 0, slotCount & (slotCount - 1) == 0,
            slotCount <= UInt64(size), size == fileSize(slotCount: Int(slotCount))
        else {
            munmap(mapping, size)
            return nil
        }
        return JournalLookupTable(
            generation: generation, covered: Int(covered), slotCount: Int(slotCount), regionsChecksum: u64(32), bytes: bytes)
    }

    /// Whether the `count` slots from position `first` on (wrapping around the end) are the ones
    /// the table was written with: the checksums of the regions that hold them, each computed
    /// once, by the first lookup that needs it (about 10 µs a region), not by the opening or its
    /// hits. The regions' own checksums are checked against the header at the first call.
    func slotsAreIntact(from first: Int, count: Int) -> Bool {
        let regionSize = Self.regionSize(slotCount: slotCount)
        let regionCount = slotCount / regionSize
        let regionsStart = Self.headerSize + slotCount * Self.slotSize
        return checkedRegions.withLock { checked in
            if checked == nil {
                let sums = UnsafeRawBufferPointer(rebasing: bytes[regionsStart..<(regionsStart + regionCount * 8)])
                checked = (XXH64.hash(sums) == regionsChecksum, Array(repeating: nil, count: regionCount))
            }
            guard checked?.intact == true else { return false }
            let firstRegion = first / regionSize
            let lastRegion = (first + max(count, 1) - 1) / regionSize
            for unwrapped in firstRegion...lastRegion {
                let region = unwrapped % regionCount
                if let known = checked?.regions[region] {
                    if !known { return false }
                    continue
                }
                let start = Self.headerSize + region * regionSize * Self.slotSize
                let slots = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + regionSize * Self.slotSize)])
                let expected = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: regionsStart + region * 8, as: UInt64.self))
                let intact = XXH64.hash(slots) == expected
                checked?.regions[region] = intact
                if !intact { return false }
            }
            return true
        }
    }

    /// Calls `body` with the offsets of every slot whose tag is `key`'s, in probing order, until
    /// it returns false or an empty slot ends the chain. Returns the slots it read: the first
    /// position and how many, the empty slot included (what `slotsAreIntact` must vouch for when
    /// the answer is a miss).
    @discardableResult
    func forEachCandidate(_ key: UnsafeRawBufferPointer, _ body: (JournalOffsets) -> Bool) -> (first: Int, count: Int) {
        let hash = XXH64.hash(key)
        let tag = UInt32(truncatingIfNeeded: hash) | 1
        let first = Int(truncatingIfNeeded: hash >> 32) & (slotCount - 1)
        var position = first
        for read in 1...slotCount {
            let slot = Self.headerSize + position * Self.slotSize
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: slot, as: UInt32.self))
            if stored == 0 { return (first, read) }
            if stored == tag {
                let offsets = JournalOffsets(
                    add: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: slot + 4, as: UInt32.self)),
                    metadata: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: slot + 8, as: UInt32.self)),
                    verified: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: slot + 12, as: UInt32.self)))
                if !body(offsets) { return (first, read) }
            }
            position = (position + 1) & (slotCount - 1)
        }
        return (first, slotCount)
    }

    /// The bytes of a table for the journal of `generation`, describing its first `covered`
    /// bytes with `entries` (each live key and its offsets; entries whose `add` offset is
    /// unknown are left out, and the table then answers no miss).
    static func encode(generation: UInt64, covered: Int, entries: [(key: String, offsets: JournalOffsets)]) -> [UInt8] {
        let wanted = max(16, entries.count + entries.count / 4 + 1)  // at most 80 % full
        var slotCount = 16
        while slotCount < wanted { slotCount <<= 1 }
        var bytes = [UInt8](repeating: 0, count: fileSize(slotCount: slotCount))
        bytes.withUnsafeMutableBytes { raw in
            func put32(_ value: UInt32, _ offset: Int) { raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
            func put64(_ value: UInt64, _ offset: Int) { raw.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self) }
            put32(magic, 0)
            put32(formatVersion, 4)
            put64(generation, 8)
            put64(UInt64(covered), 16)
            put64(UInt64(slotCount), 24)
            for (key, offsets) in entries where offsets.add != JournalOffsets.unknown {
                var key = key
                let hash = key.withUTF8 { XXH64.hash(UnsafeRawBufferPointer($0)) }
                var position = Int(truncatingIfNeeded: hash >> 32) & (slotCount - 1)
                while raw.load(fromByteOffset: headerSize + position * slotSize, as: UInt32.self) != 0 {
                    position = (position + 1) & (slotCount - 1)
                }
                let slot = headerSize + position * slotSize
                put32(UInt32(truncatingIfNeeded: hash) | 1, slot)
                put32(offsets.add, slot + 4)
                put32(offsets.metadata, slot + 8)
                put32(offsets.verified, slot + 12)
            }
            let regionSize = regionSize(slotCount: slotCount)
            let regionsStart = headerSize + slotCount * slotSize
            for region in 0..<(slotCount / regionSize) {
                let start = headerSize + region * regionSize * slotSize
                put64(XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[start..<(start + regionSize * slotSize)])), regionsStart + region * 8)
            }
            // A table that leaves a live key out must answer no miss: the checksum of its regions'
            // checksums is recorded inverted, so `slotsAreIntact` is always false (it still
            // serves hits).
            let complete = entries.allSatisfy { $0.offsets.add != JournalOffsets.unknown }
            let regionsChecksum = XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[regionsStart...]))
            put64(complete ? regionsChecksum : ~regionsChecksum, 32)
            put64(XXH64.hash(UnsafeRawBufferPointer(rebasing: raw[0..<40])), 40)
        }
        return bytes
    }
}
