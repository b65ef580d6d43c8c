import Foundation

/// CRC-32 (IEEE 802.3, the polynomial PNG, zlib and gzip use), computed slicing-by-8.
///
/// The file caches store one per entry to detect corrupted or truncated files, and the image
/// validators check PNG chunks with it. Slicing-by-8 processes eight bytes per step, which keeps
/// checksumming well below the cost of reading the same bytes from disk.
///
/// ```swift
/// var crc = CRC32()
/// crc.update(chunk1)
/// crc.update(chunk2)
/// let value = crc.value
/// ```
public struct CRC32: Sendable, Hashable {
    /// The checksum of everything passed to `update` so far.
    public var value: UInt32 { ~state }

    private var state: UInt32 = 0xFFFF_FFFF

    /// Creates a checksum of no bytes.
    public init() {}

    /// Returns the checksum of `bytes` in one call.
    public static func checksum(_ bytes: some DataProtocol) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    /// Feeds more bytes into the checksum.
    public mutating func update(_ bytes: some DataProtocol) {
        for region in bytes.regions {
            region.withUnsafeBytes { update(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Feeds the bytes of a raw buffer into the checksum.
    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        let tables = CRC32Tables.shared
        var crc = state
        var index = 0
        let count = buffer.count
        tables.storage.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let one = UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8
                    | UInt32(buffer[index + 2]) << 16 | UInt32(buffer[index + 3]) << 24
                let low = crc ^ one
                let b4 = Int(buffer[index + 4]), b5 = Int(buffer[index + 5])
                let b6 = Int(buffer[index + 6]), b7 = Int(buffer[index + 7])
                crc = table[7 * 256 + Int(low & 0xFF)]
                    ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)]
                    ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + b4]
                    ^ table[2 * 256 + b5]
                    ^ table[1 * 256 + b6]
                    ^ table[b7]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(buffer[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        state = crc
    }
}

/// The eight 256-entry lookup tables of slicing-by-8, built once per process.
private struct CRC32Tables: Sendable {
    static let shared = CRC32Tables()

    let storage: [UInt32]

    private init() {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
            table[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        storage = table
    }
}
