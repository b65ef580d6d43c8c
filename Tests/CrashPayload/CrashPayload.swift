import Foundation

/// SplitMix64: a small deterministic generator, shared by the crash writer (a child process)
/// and the tests that check what it wrote, so both derive the same sequences from a seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's state; the seed at creation.
    public var state: UInt64

    /// Creates a generator starting from `state`.
    public init(state: UInt64) { self.state = state }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The bytes the crash writer stores for a key at a generation: the child writes them, the parent
/// recomputes them to check every entry it finds without knowing what happened before the kill.
public enum CrashPayload {
    /// The bytes of `key` at `generation` (0 to 11,999 of them, derived from both).
    public static func bytes(key: String, generation: UInt64) -> Data {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        var generator = SplitMix64(state: hash ^ (generation &* 0x9E37_79B9_7F4A_7C15))
        let count = Int(generator.next() % 12_000)
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            let value = generator.next()
            var shift: UInt64 = 0
            while shift < 64 && index < count {
                bytes[index] = UInt8(truncatingIfNeeded: value >> shift)
                shift += 8
                index += 1
            }
        }
        return Data(bytes)
    }

    /// The pinned quota the crash writer opens its caches with, in bytes: room for about ten
    /// pinned payloads in a `FileCache`, twenty-five in a `BigFileCache`, so that pinned commits
    /// and pins past it are refused now and then.
    public static func pinnedQuota(big: Bool) -> Int {
        big ? 150_000 : 60_000
    }
}
