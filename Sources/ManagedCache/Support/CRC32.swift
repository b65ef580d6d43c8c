import Foundation

/// CRC-32 (IEEE 802.3, the polynomial PNG, zlib and gzip use), computed slicing-by-16.
///
/// The file caches store one per entry to detect corrupted or truncated files, and the image
/// validators check PNG chunks with it. Slicing-by-16 folds sixteen bytes per step through
/// sixteen lookup tables (two unaligned 64-bit loads, sixteen independent table loads), about
/// twice the speed of the slicing-by-8 it replaced (see BENCHMARKS.md, `crc32`). The hardware
/// CRC instructions are out of reach: SSE 4.2's `crc32` computes CRC-32C, another polynomial,
/// and the carry-less multiply that folds IEEE CRCs has no portable Swift spelling without a C target.
///
/// ```swift no-check
/// var crc = CRC32()
/// crc.update(Data("The quick brown fox ".utf8))
/// crc.update(Data("jumps over the lazy dog".utf8))
/// assert(crc.value == CRC32.checksum(Data("The quick brown fox jumps over the lazy dog".utf8)))  // 0x414FA339
/// ```
package struct CRC32: Sendable, Hashable {
    /// The checksum of everything passed to `update` so far.
    package var value: UInt32 { ~state }

    private var state: UInt32 = 0xFFFF_FFFF

    /// Creates a checksum of no bytes.
    package init() {}

    /// Computes a checksum in one call.
    ///
    /// - Parameter bytes: The bytes.
    /// - Returns: Their CRC-32.
    package static func checksum(_ bytes: some DataProtocol) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    /// Feeds more bytes into the checksum.
    ///
    /// - Parameter bytes: The next bytes, in order.
    package mutating func update(_ bytes: some DataProtocol) {
        for region in bytes.regions {
            region.withUnsafeBytes { update(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Feeds the bytes of a raw buffer into the checksum.
    ///
    /// - Parameter buffer: The next bytes, in order.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let start = buffer.baseAddress, !buffer.isEmpty else { return }
        state = CRC32Tables.shared.storage.withUnsafeBufferPointer { storage in
            Self.fold(state, start, buffer.count, storage.baseAddress!)
        }
    }

    /// The running (uninverted) CRC after `count` more bytes from `bytes`; `table` is the
    /// sixteen tables one after the other, table `k` at `k * 256`.
    private static func fold(_ initial: UInt32, _ bytes: UnsafeRawPointer, _ count: Int, _ table: UnsafePointer<UInt32>) -> UInt32 {
        var crc = initial
        var cursor = bytes
        var remaining = count
        @inline(__always) func entry(_ slice: Int, _ word: UInt64, _ byte: UInt64) -> UInt32 {
            table[slice &* 256 &+ Int(truncatingIfNeeded: (word &>> (byte &* 8)) & 0xFF)]
        }
        while remaining >= 16 {
            // Byte i of the sixteen goes through table 15 - i; the first four bytes also absorb the
            // running CRC (little-endian, as the CRC is reflected). The twelve terms that do not
            // depend on the CRC are combined first, so that only four table loads and four XORs
            // stand between one step's CRC and the next (the loop-carried dependency).
            let low = UInt64(littleEndian: cursor.loadUnaligned(as: UInt64.self))
            let high = UInt64(littleEndian: cursor.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            let b = entry(11, low, 4) ^ entry(10, low, 5) ^ entry(9, low, 6) ^ entry(8, low, 7)
            let c = entry(7, high, 0) ^ entry(6, high, 1) ^ entry(5, high, 2) ^ entry(4, high, 3)
            let d = entry(3, high, 4) ^ entry(2, high, 5) ^ entry(1, high, 6) ^ entry(0, high, 7)
            let independent = b ^ c ^ d
            let mixed = UInt64(UInt32(truncatingIfNeeded: low) ^ crc)
            crc = independent ^ (entry(15, mixed, 0) ^ entry(14, mixed, 1)) ^ (entry(13, mixed, 2) ^ entry(12, mixed, 3))
            cursor += 16
            remaining &-= 16
        }
        while remaining > 0 {
            let byte = UInt32(cursor.load(as: UInt8.self))
            crc = table[Int((crc ^ byte) & 0xFF)] ^ (crc >> 8)
            cursor += 1
            remaining &-= 1
        }
        return crc
    }
}

/// The sixteen 256-entry lookup tables of slicing-by-16, built once per process. Table 0 is the
/// classic byte-at-a-time table; table `k` advances a byte's contribution by `k` more zero bytes.
private struct CRC32Tables: Sendable {
    static let shared = CRC32Tables()
    static let sliceCount = 16

    let storage: [UInt32]

    private init() {
        var table = [UInt32](repeating: 0, count: Self.sliceCount * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
            table[byte] = crc
        }
        for slice in 1..<Self.sliceCount {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        storage = table
    }
}
