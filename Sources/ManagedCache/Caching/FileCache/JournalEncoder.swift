import Foundation

/// Builds journal frames.
struct JournalEncoder {
    private(set) var bytes: [UInt8] = []

    /// Journal payloads above this are treated as damage when decoding.
    static let maximumPayload = 16 << 20

    var isEmpty: Bool { bytes.isEmpty }

    /// Appends the frames of `other`, as they are.
    mutating func append(contentsOf other: JournalEncoder) {
        bytes.append(contentsOf: other.bytes)
    }

    /// Appends one framed record.
    mutating func append(_ record: JournalRecord) {
        let start = bytes.count
        if case .add(let entry) = record {
            // Room for the whole frame of a record without metadata strings (the common case): one
            // allocation per commit, not one per doubling of the array.
            bytes.reserveCapacity(start + 80 + entry.key.utf8.count)
        }
        bytes.append(contentsOf: repeatElement(0, count: 8))
        bytes.append(record.typeCode)
        switch record {
        case .header(let layout, let generation):
            bytes.append(contentsOf: [0x4D, 0x43, 0x4A, 0x31])  // "MCJ1"
            bytes.append(layout)
            putU64(generation)
        case .add(let entry):
            putString(entry.key)
            if entry.pinned {
                var flags = JournalRecord.pinnedFlag
                if case .crc32 = entry.checksum { flags |= JournalRecord.crc32Flag }
                bytes.append(flags)
            }
            putU64(entry.id.digestHigh)
            putU64(entry.id.digestLow)
            putU64(entry.id.version)
            putU64(UInt64(entry.size))
            switch entry.checksum {
            case .crc32(let value): putU32(value)
            case .xxh64(let value): putU64(value)
            }
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
        case .verified(let key, let version, let stamp):
            putString(key)
            putU64(version)
            putU64(stamp.device)
            putU64(stamp.inode)
            putU64(UInt64(bitPattern: stamp.size))
            putU64(UInt64(bitPattern: stamp.modified))
            putU64(UInt64(bitPattern: stamp.changed))
        case .pin(let key, let version, let pinned):
            putString(key)
            putU64(version)
            bytes.append(pinned ? 1 : 0)
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
        if let etag = metadata.etag {
            flags |= 2
            putString(etag)
        }
        if let lastModified = metadata.lastModified {
            flags |= 4
            putString(lastModified)
        }
        if let contentType = metadata.contentType {
            flags |= 8
            putString(contentType)
        }
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
