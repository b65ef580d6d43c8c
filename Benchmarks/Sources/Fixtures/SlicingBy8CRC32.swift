/// The CRC-32 the library used before slicing-by-16 (slicing-by-8, one byte load at a time),
/// kept here as the `crc32` scenario's same-run baseline.
enum SlicingBy8CRC32 {
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            table[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()

    /// The CRC-32 of `buffer`.
    static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        var index = 0
        let count = buffer.count
        table.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let one =
                    UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8
                    | UInt32(buffer[index + 2]) << 16 | UInt32(buffer[index + 3]) << 24
                let low = crc ^ one
                let b4 = Int(buffer[index + 4])
                let b5 = Int(buffer[index + 5])
                let b6 = Int(buffer[index + 6])
                let b7 = Int(buffer[index + 7])
                crc =
                    table[7 * 256 + Int(low & 0xFF)]
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
        return ~crc
    }
}
