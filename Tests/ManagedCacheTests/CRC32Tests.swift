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
