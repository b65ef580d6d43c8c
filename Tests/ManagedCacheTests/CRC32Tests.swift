import Foundation
import ManagedCache
import Testing

@Suite struct CRC32Tests {
    @Test func matchesTheStandardCheckValue() {
        // "123456789" is the check input every CRC-32 catalogue gives; its CRC is 0xCBF43926.
        #expect(CRC32.checksum(Data("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum(Data()) == 0)
    }

    @Test func incrementalUpdatesEqualOneShot() {
        let bytes = Data((0..<10_007).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        var crc = CRC32()
        var offset = 0
        for size in [1, 3, 8, 15, 1024, 4000] where offset < bytes.count {
            let end = min(bytes.count, offset + size)
            crc.update(bytes[offset..<end])
            offset = end
        }
        crc.update(bytes[offset...])
        #expect(crc.value == CRC32.checksum(bytes))
        #expect(crc.value != CRC32.checksum(bytes.dropLast()))
    }
}

@Suite struct CRC32AgreementTests {
    /// The CRC computed one bit at a time, straight from the definition.
    static func bitwise(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test func agreesWithTheBitwiseDefinitionAtEveryLengthAndAlignment() {
        var generator = SystemRandomNumberGenerator()
        let pool = (0..<600).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Every length around the 16-byte step, from every start offset within a word.
        for start in 0..<9 {
            for length in 0..<70 {
                let bytes = Array(pool[start..<(start + length)])
                let fast = pool.withUnsafeBytes { raw in
                    var crc = CRC32()
                    crc.update(UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]))
                    return crc.value
                }
                #expect(fast == Self.bitwise(bytes), "start \(start), length \(length)")
            }
        }
        #expect(CRC32.checksum(pool) == Self.bitwise(pool))
    }

    @Test func detectsEverySingleBitFlip() {
        let bytes = (0..<48).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let original = CRC32.checksum(bytes)
        for index in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= UInt8(1 << bit)
                #expect(CRC32.checksum(flipped) != original)
            }
        }
    }
}
