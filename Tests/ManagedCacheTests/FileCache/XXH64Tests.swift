import Foundation
import Testing

@testable import ManagedCache

@Suite struct XXH64Tests {
    /// The test pattern the reference values were computed over.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131 &+ 7) >> 1) }
    }

    /// XXH64 with seed 0 of `pattern(n)`, from the reference implementation (xxHash 0.8, through
    /// its Python binding): every length class of the algorithm (empty, under 4, 4–7, 8–31, whole
    /// stripes, stripes plus each kind of tail).
    static let reference: [(Int, UInt64)] = [
        (0, 0xEF46_DB37_51D8_E999), (1, 0x1F25_C8D0_BC1F_4BB6), (3, 0xFAE6_158D_E2E6_81C8),
        (4, 0x6291_7774_D28E_A099), (7, 0x2E36_725B_0084_2EE2), (8, 0xD8A3_7A74_56CA_36FD),
        (15, 0x19F3_EB05_24EC_3BE8), (31, 0xCEC8_C2BE_9BD2_6A69), (32, 0xB690_6415_3D48_51A5),
        (33, 0x732D_A223_1577_3994), (63, 0x4A1B_11C9_3A45_E7EE), (64, 0x7F35_AAFC_3388_C0B8),
        (100, 0x1C0C_2332_E8FF_479A), (1000, 0xC722_7A16_AD90_64C5), (4096, 0x6D7C_E5F6_7FCD_62A0),
        (100_003, 0xCFD6_27BC_A8B5_DDE2),
    ]

    @Test func matchesTheReferenceImplementation() {
        for (count, expected) in Self.reference {
            let value = Self.pattern(count).withUnsafeBytes { XXH64.hash($0) }
            #expect(value == expected, "length \(count)")
        }
        #expect(Array("abc".utf8).withUnsafeBytes { XXH64.hash($0) } == 0x44BC_2CF5_AD77_0999)
    }

    @Test func anySplitIntoUpdatesGivesTheOneShotValue() {
        let bytes = Self.pattern(1000)
        let expected = bytes.withUnsafeBytes { XXH64.hash($0) }
        bytes.withUnsafeBytes { raw in
            // Every split point for two pieces, and a few ragged sequences of piece sizes.
            for split in 0...raw.count {
                var hasher = XXH64()
                hasher.update(UnsafeRawBufferPointer(rebasing: raw[..<split]))
                hasher.update(UnsafeRawBufferPointer(rebasing: raw[split...]))
                #expect(hasher.value == expected, "split at \(split)")
            }
            for sizes in [[1], [3, 5], [31, 1], [33], [7, 64, 2], [100]] {
                var hasher = XXH64()
                var offset = 0
                var step = 0
                while offset < raw.count {
                    let end = min(raw.count, offset + sizes[step % sizes.count])
                    hasher.update(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                    offset = end
                    step += 1
                }
                #expect(hasher.value == expected, "pieces \(sizes)")
            }
        }
    }

    @Test func readingTheValueLeavesTheStateAlone() {
        let bytes = Self.pattern(77)
        bytes.withUnsafeBytes { raw in
            var hasher = XXH64()
            hasher.update(UnsafeRawBufferPointer(rebasing: raw[..<40]))
            _ = hasher.value
            hasher.update(UnsafeRawBufferPointer(rebasing: raw[40...]))
            #expect(hasher.value == XXH64.hash(raw))
        }
    }
}
