/// XXH64 (seed 0), the 64-bit hash of the xxHash family, computed incrementally: the checksum
/// the file caches record for new entries (older entries keep their CRC-32).
///
/// Why not CRC-32: a table-driven CRC is bound by its table loads (one per byte; about 3.7 GB/s
/// here with slicing-by-16), which made the checksum as expensive as writing a 256 KiB entry to
/// tmpfs. XXH64 runs four independent multiply-rotate lanes over 32-byte stripes, about three
/// times faster in plain Swift. For detecting corruption of a file at rest (torn or lost writes,
/// zeroed pages, changed bytes) a well-mixed 64-bit hash misses a given corruption with
/// probability 2⁻⁶⁴, against 2⁻³² for CRC-32; CRC-32's extra guarantee (every burst of up to 32
/// bits) matters for transmission lines, not for files whose size is checked separately.
///
/// Written from the published specification (xxhash_spec.md); `XXH64Tests` checks it against
/// the reference values and across every split of the input into `update` calls.
struct XXH64: Sendable, Hashable {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var lane1: UInt64 = prime1 &+ prime2
    private var lane2: UInt64 = prime2
    private var lane3: UInt64 = 0
    private var lane4: UInt64 = 0 &- prime1
    private var totalLength: UInt64 = 0
    /// Up to 31 bytes not yet consumed as a stripe, in `pending0…3` (little-endian words).
    private var pending = PendingStripe()
    private var pendingCount = 0

    /// A hash of no bytes.
    init() {}

    /// Feeds more bytes.
    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard var cursor = buffer.baseAddress, !buffer.isEmpty else { return }
        var remaining = buffer.count
        totalLength &+= UInt64(remaining)
        if pendingCount > 0 {
            let taken = min(32 - pendingCount, remaining)
            pending.append(cursor, count: taken, at: pendingCount)
            pendingCount += taken
            cursor += taken
            remaining -= taken
            guard pendingCount == 32 else { return }
            pending.withBytes { consumeStripes($0, count: 32) }
            pendingCount = 0
        }
        let whole = remaining & ~31
        if whole > 0 {
            consumeStripes(cursor, count: whole)
            cursor += whole
            remaining -= whole
        }
        if remaining > 0 {
            pending.append(cursor, count: remaining, at: 0)
            pendingCount = remaining
        }
    }

    /// The hash of everything fed so far (the state is not changed).
    var value: UInt64 {
        var hash: UInt64
        if totalLength >= 32 {
            hash = rotate(lane1, 1) &+ rotate(lane2, 7) &+ rotate(lane3, 12) &+ rotate(lane4, 18)
            hash = Self.merge(hash, lane1)
            hash = Self.merge(hash, lane2)
            hash = Self.merge(hash, lane3)
            hash = Self.merge(hash, lane4)
        } else {
            hash = Self.prime5
        }
        hash &+= totalLength
        return pending.withBytes { tail in
            var offset = 0
            while pendingCount - offset >= 8 {
                let lane = UInt64(littleEndian: tail.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                hash ^= Self.round(0, lane)
                hash = rotate(hash, 27) &* Self.prime1 &+ Self.prime4
                offset += 8
            }
            if pendingCount - offset >= 4 {
                let word = UInt64(UInt32(littleEndian: tail.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                hash ^= word &* Self.prime1
                hash = rotate(hash, 23) &* Self.prime2 &+ Self.prime3
                offset += 4
            }
            while offset < pendingCount {
                hash ^= UInt64(tail.load(fromByteOffset: offset, as: UInt8.self)) &* Self.prime5
                hash = rotate(hash, 11) &* Self.prime1
                offset += 1
            }
            hash ^= hash >> 33
            hash &*= Self.prime2
            hash ^= hash >> 29
            hash &*= Self.prime3
            hash ^= hash >> 32
            return hash
        }
    }

    /// The hash of `buffer` in one call.
    static func hash(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = XXH64()
        hasher.update(buffer)
        return hasher.value
    }

    /// Runs the four lanes over `count` bytes (a multiple of 32).
    private mutating func consumeStripes(_ bytes: UnsafeRawPointer, count: Int) {
        var v1 = lane1
        var v2 = lane2
        var v3 = lane3
        var v4 = lane4
        var offset = 0
        while offset < count {
            v1 = Self.round(v1, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            v2 = Self.round(v2, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)))
            v3 = Self.round(v3, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self)))
            v4 = Self.round(v4, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self)))
            offset &+= 32
        }
        lane1 = v1
        lane2 = v2
        lane3 = v3
        lane4 = v4
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        rotate(accumulator &+ lane &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ hash: UInt64, _ lane: UInt64) -> UInt64 {
        (hash ^ round(0, lane)) &* prime1 &+ prime4
    }
}

@inline(__always)
private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
    (value &<< count) | (value &>> (64 &- count))
}

/// 32 bytes of storage for a partial stripe, inline (no allocation per hasher).
private struct PendingStripe: Sendable, Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    mutating func append(_ source: UnsafeRawPointer, count: Int, at offset: Int) {
        withUnsafeMutableBytes(of: &words) { storage in
            (storage.baseAddress! + offset).copyMemory(from: source, byteCount: count)
        }
    }

    func withBytes<T>(_ body: (UnsafeRawPointer) -> T) -> T {
        withUnsafeBytes(of: words) { body($0.baseAddress!) }
    }

    static func == (lhs: PendingStripe, rhs: PendingStripe) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
