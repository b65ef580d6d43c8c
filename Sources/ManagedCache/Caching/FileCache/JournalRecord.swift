import Foundation

/// Everything the index knows about one stored entry.
struct EntryRecord: Sendable {
    var key: String
    var id: FileID
    var size: Int
    var checksum: UInt32
    /// Commit time, seconds since the reference date.
    var created: Double
    /// The session that last used the entry (committed or hit it).
    var session: UInt32
    var metadata: FileCacheMetadata
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
    /// An entry became visible (replacing any previous version of its key).
    case add(EntryRecord)
    /// The entry with this key and version was removed.
    case remove(key: String, version: UInt64)
    /// The entry was used: it becomes the most recent, last used in `session`.
    case touch(key: String, session: UInt32)
    /// The entry's metadata was replaced.
    case metadata(key: String, version: UInt64, metadata: FileCacheMetadata)
    /// A session (one open instance) started.
    case session(UInt32)

    fileprivate var typeCode: UInt8 {
        switch self {
        case .header: 1
        case .add: 2
        case .remove: 3
        case .touch: 4
        case .metadata: 5
        case .session: 6
        }
    }
}

/// Builds journal frames.
struct JournalEncoder {
    private(set) var bytes: [UInt8] = []

    /// Journal payloads above this are treated as damage when decoding.
    static let maximumPayload = 16 << 20

    var isEmpty: Bool { bytes.isEmpty }

    /// Appends one framed record.
    mutating func append(_ record: JournalRecord) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 8))
        bytes.append(record.typeCode)
        switch record {
        case .header(let layout, let generation):
            bytes.append(contentsOf: [0x4D, 0x43, 0x4A, 0x31])  // "MCJ1"
            bytes.append(layout)
            putU64(generation)
        case .add(let entry):
            putString(entry.key)
            putU64(entry.id.digestHigh)
            putU64(entry.id.digestLow)
            putU64(entry.id.version)
            putU64(UInt64(entry.size))
            putU32(entry.checksum)
            putU64(entry.created.bitPattern)
            putU32(entry.session)
            putMetadata(entry.metadata)
        case .remove(let key, let version):
            putString(key)
            putU64(version)
        case .touch(let key, let session):
            putString(key)
            putU32(session)
        case .metadata(let key, let version, let metadata):
            putString(key)
            putU64(version)
            putMetadata(metadata)
        case .session(let session):
            putU32(session)
        }
        let length = bytes.count - start - 8
        let checksum = bytes.withUnsafeBytes { raw in
            var crc = CRC32()
            crc.update(UnsafeRawBufferPointer(rebasing: raw[(start + 8)...]))
            return crc.value
        }
        patchU32(UInt32(length), at: start)
        patchU32(checksum, at: start + 4)
    }

    /// The encoded size of an `add` record for `entry`, framing included.
    static func addRecordSize(_ entry: EntryRecord) -> Int {
        var encoder = JournalEncoder()
        encoder.append(.add(entry))
        return encoder.bytes.count
    }

    private mutating func putU32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func putU64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func putString(_ string: String) {
        putU32(UInt32(string.utf8.count))
        bytes.append(contentsOf: string.utf8)
    }

    private mutating func putOptionalDate(_ date: Date?, flag: inout UInt8, bit: UInt8) {
        if let date {
            flag |= bit
            putU64(date.timeIntervalSinceReferenceDate.bitPattern)
        }
    }

    /// Metadata: a flags byte saying which fields follow, then those fields in order.
    private mutating func putMetadata(_ metadata: FileCacheMetadata) {
        let flagsAt = bytes.count
        bytes.append(0)
        var flags: UInt8 = 0
        putOptionalDate(metadata.expirationDate, flag: &flags, bit: 1)
        if let etag = metadata.etag { flags |= 2; putString(etag) }
        if let lastModified = metadata.lastModified { flags |= 4; putString(lastModified) }
        if let contentType = metadata.contentType { flags |= 8; putString(contentType) }
        putOptionalDate(metadata.freshUntil, flag: &flags, bit: 16)
        if !metadata.userInfo.isEmpty {
            flags |= 32
            putU32(UInt32(metadata.userInfo.count))
            for (key, value) in metadata.userInfo.sorted(by: { $0.key < $1.key }) {
                putString(key)
                putString(value)
            }
        }
        bytes[flagsAt] = flags
    }

    private mutating func patchU32(_ value: UInt32, at offset: Int) {
        for index in 0..<4 {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(index * 8))
        }
    }
}

/// Reads journal frames.
enum JournalDecoder {
    /// Decodes whole frames from the start of `buffer`, passing each record and its framed size
    /// to `body`. Stops at the end of the buffer or at the first frame that is incomplete, fails
    /// its CRC or does not decode. Returns how many bytes were consumed and whether anything
    /// after them was left (a torn or damaged tail).
    static func decode(_ buffer: UnsafeRawBufferPointer, _ body: (JournalRecord, Int) -> Void) -> (consumed: Int, damaged: Bool) {
        var offset = 0
        while buffer.count - offset >= 8 {
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            let expected = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
            guard length >= 1, length <= JournalEncoder.maximumPayload, buffer.count - offset - 8 >= length else { break }
            let payload = UnsafeRawBufferPointer(rebasing: buffer[(offset + 8)..<(offset + 8 + length)])
            var crc = CRC32()
            crc.update(payload)
            guard crc.value == expected else { break }
            var reader = ByteReader(buffer: payload)
            guard let record = try? reader.record(), reader.isAtEnd else { break }
            body(record, 8 + length)
            offset += 8 + length
        }
        return (offset, offset != buffer.count)
    }
}

/// Why a payload did not decode.
struct JournalDecodingError: Error {}

/// A bounds-checked little-endian cursor over one frame's payload.
private struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    var offset = 0

    var isAtEnd: Bool { offset == buffer.count }

    mutating func record() throws(JournalDecodingError) -> JournalRecord {
        switch try u8() {
        case 1:
            guard try u8() == 0x4D, try u8() == 0x43, try u8() == 0x4A, try u8() == 0x31 else {
                throw JournalDecodingError()
            }
            return .header(layout: try u8(), generation: try u64())
        case 2:
            let key = try string()
            let id = FileID(digestHigh: try u64(), digestLow: try u64(), version: try u64())
            let size = try u64()
            guard size <= UInt64(Int.max) else { throw JournalDecodingError() }
            let checksum = try u32()
            let created = Double(bitPattern: try u64())
            let session = try u32()
            let metadata = try self.metadata()
            return .add(EntryRecord(key: key, id: id, size: Int(size), checksum: checksum, created: created,
                                    session: session, metadata: metadata))
        case 3:
            return .remove(key: try string(), version: try u64())
        case 4:
            return .touch(key: try string(), session: try u32())
        case 5:
            return .metadata(key: try string(), version: try u64(), metadata: try metadata())
        case 6:
            return .session(try u32())
        default:
            throw JournalDecodingError()
        }
    }

    mutating func u8() throws(JournalDecodingError) -> UInt8 {
        guard offset < buffer.count else { throw JournalDecodingError() }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func u32() throws(JournalDecodingError) -> UInt32 {
        guard buffer.count - offset >= 4 else { throw JournalDecodingError() }
        defer { offset += 4 }
        return buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
    }

    mutating func u64() throws(JournalDecodingError) -> UInt64 {
        guard buffer.count - offset >= 8 else { throw JournalDecodingError() }
        defer { offset += 8 }
        return buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
    }

    mutating func string() throws(JournalDecodingError) -> String {
        let count = Int(try u32())
        guard buffer.count - offset >= count else { throw JournalDecodingError() }
        defer { offset += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)]), as: UTF8.self)
    }

    mutating func date() throws(JournalDecodingError) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try u64()))
    }

    private static let noMetadata = FileCacheMetadata()

    mutating func metadata() throws(JournalDecodingError) -> FileCacheMetadata {
        let flags = try u8()
        guard flags & 0xC0 == 0 else { throw JournalDecodingError() }
        var metadata = Self.noMetadata
        if flags & 1 != 0 { metadata.expirationDate = try date() }
        if flags & 2 != 0 { metadata.etag = try string() }
        if flags & 4 != 0 { metadata.lastModified = try string() }
        if flags & 8 != 0 { metadata.contentType = try string() }
        if flags & 16 != 0 { metadata.freshUntil = try date() }
        if flags & 32 != 0 {
            let count = Int(try u32())
            guard count <= buffer.count else { throw JournalDecodingError() }
            for _ in 0..<count {
                let key = try string()
                metadata.userInfo[key] = try string()
            }
        }
        return metadata
    }
}
