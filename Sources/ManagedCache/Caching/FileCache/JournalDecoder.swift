import Foundation

/// Reads journal frames.
enum JournalDecoder {
    /// Decodes whole frames from the start of `buffer`, passing each record and its framed size
    /// to `body`. Stops at the end of the buffer or at the first frame that is incomplete, fails
    /// its CRC or does not decode. Returns how many bytes were consumed and whether anything
    /// after them was left (a torn or damaged tail).
    ///
    /// `forIndex`: the `add` records come without their key and with no metadata but their
    /// expiration date (what the index keeps of them: see `IndexSlot`), every field still checked.
    /// Replaying a journal of a million entries then allocates no string per entry.
    static func decode(
        _ buffer: UnsafeRawBufferPointer, forIndex: Bool = false, _ body: (JournalRecord, Int) -> Void
    ) -> (consumed: Int, damaged: Bool) {
        var offset = 0
        while buffer.count - offset >= 8 {
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            let expected = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
            guard length >= 1, length <= JournalEncoder.maximumPayload, buffer.count - offset - 8 >= length else { break }
            let payload = UnsafeRawBufferPointer(rebasing: buffer[(offset + 8)..<(offset + 8 + length)])
            var crc = CRC32()
            crc.update(payload)
            guard crc.value == expected else { break }
            var reader = ByteReader(buffer: payload, forIndex: forIndex)
            guard let record = try? reader.record(), reader.isAtEnd else { break }
            body(record, 8 + length)
            offset += 8 + length
        }
        return (offset, offset != buffer.count)
    }

    /// The record of the one whole frame that starts at `offset` in `buffer`, if it checks out.
    static func frame(at offset: Int, in buffer: UnsafeRawBufferPointer) -> JournalRecord? {
        guard offset >= 0, buffer.count - offset >= 8 else { return nil }
        let length = Int(buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
        guard length >= 1, length <= buffer.count - offset - 8 else { return nil }
        var record: JournalRecord?
        let (_, damaged) = decode(UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + 8 + length)])) { decoded, _ in
            record = decoded
        }
        return damaged ? nil : record
    }
}

extension JournalDecoder {
    /// The key of the `add` record of `id` in the one whole frame at the start of `frame`, if the
    /// frame checks out (its CRC-32) and holds that record: what an eviction needs to journal the
    /// entry's removal, without decoding the rest of the record (its checksum, dates, metadata).
    static func addedKey(inFrame frame: UnsafeRawBufferPointer, of id: FileID) -> String? {
        guard frame.count >= 8 else { return nil }
        let length = Int(frame.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian)
        let expected = frame.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        guard length >= 1, frame.count - 8 >= length else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: frame[8..<(8 + length)])
        var crc = CRC32()
        crc.update(payload)
        guard crc.value == expected else { return nil }
        var reader = ByteReader(buffer: payload, forIndex: false)
        return try? reader.addedKey(of: id)
    }
}

/// Why a payload did not decode.
struct JournalDecodingError: Error {}

/// A bounds-checked little-endian cursor over one frame's payload.
private struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    /// See `JournalDecoder.decode(_:forIndex:_:)`.
    let forIndex: Bool
    var offset = 0

    var isAtEnd: Bool { offset == buffer.count }

    mutating func record() throws(JournalDecodingError) -> JournalRecord {
        let type = try u8()
        switch type {
        case 1:
            guard try u8() == 0x4D, try u8() == 0x43, try u8() == 0x4A, try u8() == 0x31 else {
                throw JournalDecodingError()
            }
            return .header(layout: try u8(), generation: try u64())
        case 2, 8, 9:
            let key = forIndex ? try skippedString() : try string()
            // Type 9: a flags byte (pinned, CRC-32) after the key; unknown flags are damage.
            let flags = type == 9 ? try u8() : (type == 2 ? JournalRecord.crc32Flag : 0)
            guard flags & ~(JournalRecord.pinnedFlag | JournalRecord.crc32Flag) == 0 else { throw JournalDecodingError() }
            let id = FileID(digestHigh: try u64(), digestLow: try u64(), version: try u64())
            let size = try u64()
            guard size <= UInt64(Int.max) else { throw JournalDecodingError() }
            let checksum: EntryChecksum = flags & JournalRecord.crc32Flag == 0 ? .xxh64(try u64()) : .crc32(try u32())
            let created = Double(bitPattern: try u64())
            let session = try u32()
            let metadata = try self.metadata(skippingStrings: forIndex)
            return .add(
                EntryRecord(
                    key: key, id: id, size: Int(size), checksum: checksum, created: created,
                    session: session, metadata: metadata, pinned: flags & JournalRecord.pinnedFlag != 0))
        case 3:
            return .remove(key: try string(), version: try u64())
        case 4:
            return .touch(key: try string(), session: try u32())
        case 5:
            return .metadata(key: try string(), version: try u64(), metadata: try metadata())
        case 6:
            return .session(try u32())
        case 7:
            let key = try string()
            let version = try u64()
            let stamp = FileStamp(
                device: try u64(), inode: try u64(), size: Int64(bitPattern: try u64()),
                modified: Int64(bitPattern: try u64()), changed: Int64(bitPattern: try u64()))
            return .verified(key: key, version: version, stamp: stamp)
        case 10:
            let key = try string()
            let version = try u64()
            let pinned = try u8()
            guard pinned <= 1 else { throw JournalDecodingError() }
            return .pin(key: key, version: version, pinned: pinned == 1)
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

    /// The key of an `add` record of `id` (types 2, 8 and 9: the key, a flags byte for type 9,
    /// then the identity), or nil for any other record.
    mutating func addedKey(of id: FileID) throws(JournalDecodingError) -> String? {
        let type = try u8()
        guard type == 2 || type == 8 || type == 9 else { return nil }
        let key = try string()
        if type == 9 { _ = try u8() }
        guard FileID(digestHigh: try u64(), digestLow: try u64(), version: try u64()) == id else { return nil }
        return key
    }

    mutating func string() throws(JournalDecodingError) -> String {
        let count = Int(try u32())
        guard buffer.count - offset >= count else { throw JournalDecodingError() }
        defer { offset += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)]), as: UTF8.self)
    }

    /// Checks and skips a string, returning the empty one.
    mutating func skippedString() throws(JournalDecodingError) -> String {
        let count = Int(try u32())
        guard buffer.count - offset >= count else { throw JournalDecodingError() }
        offset += count
        return ""
    }

    mutating func date() throws(JournalDecodingError) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try u64()))
    }

    private static let noMetadata = FileCacheMetadata()

    /// The metadata; with `skippingStrings`, only its expiration date (the rest checked and skipped).
    mutating func metadata(skippingStrings: Bool = false) throws(JournalDecodingError) -> FileCacheMetadata {
        let flags = try u8()
        guard flags & 0xC0 == 0 else { throw JournalDecodingError() }
        var metadata = Self.noMetadata
        if flags & 1 != 0 { metadata.expirationDate = try date() }
        if skippingStrings {
            for bit: UInt8 in [2, 4, 8] where flags & bit != 0 { _ = try skippedString() }
            if flags & 16 != 0 { _ = try u64() }
        } else {
            if flags & 2 != 0 { metadata.etag = try string() }
            if flags & 4 != 0 { metadata.lastModified = try string() }
            if flags & 8 != 0 { metadata.contentType = try string() }
            if flags & 16 != 0 { metadata.freshUntil = try date() }
        }
        if flags & 32 != 0 {
            let count = Int(try u32())
            guard count <= buffer.count else { throw JournalDecodingError() }
            for _ in 0..<count {
                if skippingStrings {
                    _ = try skippedString()
                    _ = try skippedString()
                } else {
                    let key = try string()
                    metadata.userInfo[key] = try string()
                }
            }
        }
        return metadata
    }
}
