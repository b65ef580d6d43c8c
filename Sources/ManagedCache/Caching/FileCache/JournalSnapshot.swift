import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal as it was when a cache opened, mapped read-only: what the background replay
/// decodes, and what a lookup scans for its key before the replay has finished.
///
/// Why its bytes cannot change under it: it covers the journal's first `count` bytes, taken
/// with the journal lock held. Every later write to that file is an append past them (appends
/// happen under the lock after catching up to the end), a failed append is truncated back only to
/// where it started, and compaction and repair write a new file and rename it over the path,
/// leaving this inode, and so this mapping, as it was.
final class JournalSnapshot: @unchecked Sendable {
    // Safe to be Sendable: nothing here is mutable after `init` but `walkedTail`, behind its
    // lock; the bytes are a private,
    // read-only mapping (or a private copy) whose contents never change (see above), and they are
    // unmapped only in `deinit`, when no one can be reading them.

    /// The journal's first bytes.
    let bytes: UnsafeRawBufferPointer
    /// Where the first frame (the header) ends.
    let headerEnd: Int
    /// The generation in the journal's header.
    let generation: UInt64
    /// The lookup table of this journal, when there is one (see `JournalLookupTable`).
    let table: JournalLookupTable?
    /// The journal file's device and inode: whether the journal's path still names it.
    let file: (device: UInt64, inode: UInt64)?
    private let mapping: UnsafeMutableRawPointer?
    private let copy: UnsafeMutableRawPointer?
    /// The keys of the tail (see `tailKeys`), once walked.
    private let walkedTail = Lock<TailKeys?>(nil)

    private init(
        bytes: UnsafeRawBufferPointer, headerEnd: Int, generation: UInt64, table: JournalLookupTable?,
        file: (device: UInt64, inode: UInt64)?, mapping: UnsafeMutableRawPointer?, copy: UnsafeMutableRawPointer?
    ) {
        self.bytes = bytes
        self.headerEnd = headerEnd
        self.generation = generation
        self.table = table
        self.file = file
        self.mapping = mapping
        self.copy = copy
    }

    deinit {
        if let mapping { munmap(mapping, bytes.count) }
        copy?.deallocate()
    }

    /// What opening the journal's first frame found.
    enum Opening {
        /// The journal starts with a valid header of this layout.
        case snapshot(JournalSnapshot)
        /// The header names another layout (a `FileCache` opening a `BigFileCache` directory).
        case foreignLayout
        /// No valid header, an empty journal, or it could not be mapped or read: replay it the
        /// ordinary way (which repairs what needs repairing).
        case unusable
    }

    /// Maps the first `size` bytes of the journal open as `descriptor`, checks its header against
    /// `layout` and opens its lookup table at `tablePath`, if it has a valid one. Call with the
    /// journal lock held.
    static func open(descriptor: Int32, size: Int, layout: CacheLayout.Kind, tablePath: String) -> Opening {
        guard size > 8 else { return .unusable }
        var mapping: UnsafeMutableRawPointer?
        var copy: UnsafeMutableRawPointer?
        // MAP_FAILED is (void *)-1, which not every platform's overlay imports.
        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        if let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != failed {
            mapping = mapped
        } else {
            // File systems that cannot map: a private copy.
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            guard Posix.readFully(descriptor, into: buffer, count: size, at: 0) == size else {
                buffer.deallocate()
                return .unusable
            }
            copy = buffer
        }
        let bytes = UnsafeRawBufferPointer(start: mapping ?? copy, count: size)
        var header: (kind: UInt8, generation: UInt64, size: Int)?
        let firstLength = Int(UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self)))
        if firstLength >= 1, firstLength <= size - 8 {
            _ = JournalDecoder.decode(UnsafeRawBufferPointer(rebasing: bytes[0..<(8 + firstLength)])) { record, frameSize in
                if case .header(let kind, let generation) = record { header = (kind, generation, frameSize) }
            }
        }
        let table = header.flatMap { JournalLookupTable.open(tablePath, generation: $0.generation, journalSize: size) }
        let file = Posix.status(of: descriptor).map {
            (device: UInt64(truncatingIfNeeded: $0.st_dev), inode: UInt64(truncatingIfNeeded: $0.st_ino))
        }
        let snapshot = JournalSnapshot(
            bytes: bytes, headerEnd: header?.size ?? 0, generation: header?.generation ?? 0, table: table, file: file,
            mapping: mapping, copy: copy)
        guard let header else { return .unusable }
        return header.kind == layout.rawValue ? .snapshot(snapshot) : .foreignLayout
    }

    /// What the journal says of one key, found by scanning.
    struct Answer {
        /// The entry's record, its metadata as last replaced.
        var record: EntryRecord
        /// The stamp of its file's last verification, if one was journaled.
        var stamp: FileStamp?
    }

    /// The entry of `key` as replaying the whole snapshot would leave it; nil when the key has
    /// no entry, or when the answer is not certain (a torn or damaged tail, a frame that does not
    /// check out), which only the replay can judge.
    ///
    /// With a lookup table, the table's frames for the key (checked: checksum, type, key,
    /// version) give its entry in the table's prefix of the journal, and only what follows the
    /// prefix is scanned. Without one, the whole snapshot is scanned: its frames walked by their
    /// length prefixes, only the key's own frames decoded and checksummed.
    ///
    /// A damaged frame whose length is intact is not noticed by a scan: the answer is then what
    /// the journal says past the damage, which the replay will discard and repair. Such an
    /// answer is still the key's own entry (the key is compared byte for byte, its frame
    /// checksummed, its file's bytes checked when read).
    func lookUp(_ key: String) -> Answer? {
        if case .entry(let answer) = find(key, answeringMisses: false) { return answer }
        return nil
    }

    /// What the snapshot says of one key, when it is certain.
    enum Finding {
        /// The key's entry, as replaying the whole snapshot would leave it.
        case entry(Answer)
        /// Replaying the whole snapshot would leave the key without an entry.
        case absent
        /// Only the replay can tell (see `find`).
        case uncertain
    }

    /// The most the scan of the snapshot's tail may cover for a miss to be answered from the
    /// snapshot: beyond it (no lookup table, or a long tail after it) a scan per miss would cost
    /// about as much as the replay it spares.
    static let missScanLimit = 1 << 20

    /// Whether the file at `path` is still this snapshot's journal at the snapshot's size: nothing
    /// was appended to it or put in its place since (one `stat`).
    func isStill(at path: String) -> Bool {
        guard let file, let info = Posix.status(path) else { return false }
        return UInt64(truncatingIfNeeded: info.st_dev) == file.device && UInt64(truncatingIfNeeded: info.st_ino) == file.inode
            && Int(info.st_size) == bytes.count
    }

    /// `lookUp`, telling "no entry" from "not certain" when `answeringMisses`.
    ///
    /// A key has no entry for certain when the lookup table lists every key of its prefix
    /// (its slots intact, see `JournalLookupTable`) and none with the key's tag, or lists it
    /// removed afterwards; and the scan of what follows the table, at most `missScanLimit`
    /// bytes, runs to the end of the snapshot through whole, checked frames and leaves the key
    /// without an entry. A slot with the key's tag whose `add` frame is another key's (a tag
    /// collision, or a damaged table) or does not check out makes the answer uncertain, as does
    /// anything the scan cannot read.
    func find(_ key: String, answeringMisses: Bool = true) -> Finding {
        var probed: (first: Int, count: Int)?
        let found = findIgnoringLimits(key, probed: &probed)
        guard case .absent = found else { return found }
        return answeringMisses && missIsCertain(probed: probed) ? .absent : .uncertain
    }

    /// Whether an `.absent` of `findIgnoringLimits` that read the table's slots `probed` may be
    /// believed (see `find`). The scan for a hit runs whatever the tail's length, as it did
    /// before misses were answered early: a key found is the key's own entry, checked frame by
    /// frame.
    private func missIsCertain(probed: (first: Int, count: Int)?) -> Bool {
        guard let table else { return bytes.count - headerEnd <= Self.missScanLimit }
        guard bytes.count - table.covered <= Self.missScanLimit, let probed else { return false }
        return table.slotsAreIntact(from: probed.first, count: probed.count)
    }

    /// `find` as if every miss could be believed; `probed` tells which slots of the table it read.
    private func findIgnoringLimits(_ key: String, probed: inout (first: Int, count: Int)?) -> Finding {
        var key = key
        return key.withUTF8 { keyBytes -> Finding in
            let key = UnsafeRawBufferPointer(keyBytes)
            guard let table else {
                if !tailKeys.mayHave(key) { return .absent }
                return scan(key, from: headerEnd, current: nil, stamp: nil)
            }
            var current: EntryRecord?
            var stamp: FileStamp?
            var checksOut = true
            var otherKeys = false
            probed = table.forEachCandidate(key) { offsets in
                guard case .add(let entry)? = frame(at: offsets.add, below: table.covered), entry.key.utf8.elementsEqual(key)
                else {
                    otherKeys = true
                    return true  // another key with the same tag: the next candidate
                }
                current = entry
                if offsets.metadata != 0 {
                    guard case .metadata(let owner, let version, let metadata)? = frame(at: offsets.metadata, below: table.covered),
                        owner.utf8.elementsEqual(key), version == entry.id.version
                    else {
                        checksOut = false
                        return false
                    }
                    current?.metadata = metadata
                }
                if offsets.verified != 0 {
                    guard case .verified(let owner, let version, let verified)? = frame(at: offsets.verified, below: table.covered),
                        owner.utf8.elementsEqual(key), version == entry.id.version
                    else {
                        checksOut = false
                        return false
                    }
                    stamp = verified
                }
                return false
            }
            guard checksOut else { return .uncertain }
            if current == nil, !otherKeys, !tailKeys.mayHave(key) { return .absent }
            let found = scan(key, from: table.covered, current: current, stamp: stamp)
            if case .absent = found, current == nil, otherKeys { return .uncertain }
            return found
        }
    }

    /// The keys that have a frame in the tail: the part of the snapshot a lookup scans after the
    /// lookup table (all of it past the header without one).
    ///
    /// Why: a miss would otherwise walk the whole tail, up to `missScanLimit` bytes (the table is
    /// rewritten at closing only once the tail passes 64 KiB or 1/16 of the journal), each time.
    /// The first lookup walks it once, as the scan does (frames by their length prefixes, keys read
    /// in place), and notes the XXH64 of every key; a key not among them has no frame there, so
    /// the table's answer stands. A tail that does not read through, or is longer than a miss may
    /// scan, is not walked (`unknown`): every lookup scans, as before.
    private var tailKeys: TailKeys {
        walkedTail.withLock { walked in
            if let walked { return walked }
            let start = table?.covered ?? headerEnd
            let keys = bytes.count - start <= Self.missScanLimit ? walkKeys(from: start) : .unknown
            walked = keys
            return keys
        }
    }

    /// The hashes of the keys with a frame past some offset, or `unknown`.
    private enum TailKeys {
        case hashes(Set<UInt64>)
        case unknown

        /// Whether `key` may have a frame there.
        func mayHave(_ key: UnsafeRawBufferPointer) -> Bool {
            guard case .hashes(let hashes) = self else { return true }
            return hashes.contains(XXH64.hash(key))
        }
    }

    /// Walks the frames from `start` to the end (as `scan` does) and hashes the key of every
    /// keyed one; `unknown` if they do not read through to the end.
    private func walkKeys(from start: Int) -> TailKeys {
        guard let base = bytes.baseAddress else { return .unknown }
        var hashes = Set<UInt64>()
        var offset = start
        let end = bytes.count
        while end - offset >= 8 {
            guard let (payload, length, type) = Self.frameHeader(in: base, at: offset, end: end) else { return .unknown }
            offset = payload + length
            guard Self.keyedTypes >> UInt16(type) & 1 != 0 else { continue }
            guard length >= 5 else { return .unknown }
            let keyCount = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: payload + 1, as: UInt32.self)))
            guard keyCount <= length - 5 else { return .unknown }
            hashes.insert(XXH64.hash(UnsafeRawBufferPointer(start: base + payload + 5, count: keyCount)))
        }
        return offset == end ? .hashes(hashes) : .unknown
    }

    /// The frame starting at `offset` (before `end`): where its payload starts, its length and its
    /// record type; `nil` when the bytes there are not a whole frame of a known type (a torn or
    /// damaged end, or a type this version does not know): only the replay can judge what follows.
    @inline(__always)
    private static func frameHeader(in base: UnsafeRawPointer, at offset: Int, end: Int) -> (
        payload: Int, length: Int, type: UInt8
    )? {
        let length = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        guard length >= 1, length <= JournalEncoder.maximumPayload, end - offset - 8 >= length else { return nil }
        let type = base.load(fromByteOffset: offset + 8, as: UInt8.self)
        guard type >= 1, type <= 10 else { return nil }
        return (offset + 8, length, type)
    }

    /// Types 2, 3, 5, 7, 8, 9 and 10 start with the key (a u32 length, the bytes); a touch (4)
    /// changes nothing a lookup returns; the header (1) and sessions (6) have no key.
    private static let keyedTypes: UInt16 = 1 << 2 | 1 << 3 | 1 << 5 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 10

    /// The record of the whole frame starting at `offset`, if it lies below `limit` and checks out.
    private func frame(at offset: UInt32, below limit: Int) -> JournalRecord? {
        let start = Int(offset)
        guard offset != JournalOffsets.unknown, start >= headerEnd, limit <= bytes.count else { return nil }
        return JournalDecoder.frame(at: start, in: UnsafeRawBufferPointer(rebasing: bytes[0..<limit]))
    }

    /// Applies the frames of `key` from `start` to the end of the snapshot to the entry known at
    /// `start` (`current`, with its verification `stamp`).
    private func scan(_ key: UnsafeRawBufferPointer, from start: Int, current: EntryRecord?, stamp: FileStamp?) -> Finding {
        guard let base = bytes.baseAddress else { return .uncertain }
        var current = current
        var stamp = stamp
        let end = bytes.count
        let keyCount = key.count
        let mine = key.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        // Keys of one cache tend to share long prefixes and suffixes (a host, a path, an
        // extension). Before comparing a whole key of the right length, one 8-byte word is
        // compared at `probe`, moved to where the last key that got past it differed: after the
        // first few frames it sits on the part that tells keys apart, and most frames are set
        // aside with one load.
        var probe = max(0, keyCount - 8)
        var probeWord: UInt64 = keyCount >= 8 ? mine.loadUnaligned(fromByteOffset: probe, as: UInt64.self) : 0
        var offset = start
        while end - offset >= 8 {
            guard let (payload, length, type) = Self.frameHeader(in: base, at: offset, end: end) else { return .uncertain }
            offset = payload + length
            guard Self.keyedTypes >> UInt16(type) & 1 != 0, length >= 5 + keyCount else { continue }
            let storedCount = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: payload + 1, as: UInt32.self)))
            guard storedCount == keyCount else { continue }
            let stored = base + payload + 5
            if keyCount >= 8 {
                guard stored.loadUnaligned(fromByteOffset: probe, as: UInt64.self) == probeWord else { continue }
                if memcmp(stored, mine, keyCount) != 0 {
                    var first = 0
                    while stored.load(fromByteOffset: first, as: UInt8.self) == mine.load(fromByteOffset: first, as: UInt8.self) {
                        first += 1
                    }
                    probe = min(first, keyCount - 8)
                    probeWord = mine.loadUnaligned(fromByteOffset: probe, as: UInt64.self)
                    continue
                }
            } else if keyCount > 0, memcmp(stored, mine, keyCount) != 0 {
                continue
            }
            var record: JournalRecord?
            let frame = UnsafeRawBufferPointer(rebasing: bytes[(payload - 8)..<offset])
            let (_, damaged) = JournalDecoder.decode(frame) { decoded, _ in record = decoded }
            guard !damaged, let record else { return .uncertain }
            switch record {
            case .add(let entry):
                current = entry
                stamp = nil
            case .remove(_, let version):
                if current?.id.version == version {
                    current = nil
                    stamp = nil
                }
            case .metadata(_, let version, let metadata):
                if current?.id.version == version { current?.metadata = metadata }
            case .verified(_, let version, let verified):
                if current?.id.version == version { stamp = verified }
            case .pin(_, let version, let pinned):
                if current?.id.version == version { current?.pinned = pinned }
            case .header, .touch, .session:
                return .uncertain  // not a keyed record: the journal is not what it seemed
            }
        }
        guard offset == end else { return .uncertain }
        guard let current else { return .absent }
        return .entry(Answer(record: current, stamp: stamp))
    }
}
