import ManagedCacheLocking

/// Helpers for the names of files and directories in a cache.
enum FileNames {
    /// The lowercase hex digit of `nibble` (0…15). Arithmetic, not a table: a global array costs
    /// a lazy-initialization check and a bounds check per digit, and a write names two files.
    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble  // "0"…"9", "a"…"f"
    }

    /// Writes `value` as 16 lowercase hex digits at `offset`.
    static func writeHex(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        for index in 0..<16 {
            buffer[offset + index] = hexDigit(UInt8(truncatingIfNeeded: value >> UInt64(60 - index * 4)) & 0xF)
        }
    }

    /// The value of a lowercase hex digit, or nil.
    static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case 0x30...0x39: return character - 0x30
        case 0x61...0x66: return character - 0x61 + 10
        default: return nil
        }
    }

    /// A bucket directory's name: two lowercase hex digits.
    static func bucketName(_ bucket: Int) -> String {
        String(unsafeUninitializedCapacity: 2) { buffer in
            buffer[0] = hexDigit(UInt8(truncatingIfNeeded: bucket >> 4) & 0xF)
            buffer[1] = hexDigit(UInt8(truncatingIfNeeded: bucket) & 0xF)
            return 2
        }
    }

    /// The bucket a directory name denotes ("00" … "ff"), or nil.
    static func bucket(named name: UnsafePointer<CChar>) -> Int? {
        guard let high = hexValue(UInt8(bitPattern: name[0])), let low = hexValue(UInt8(bitPattern: name[1])),
            name[2] == 0
        else { return nil }
        return Int(high) << 4 | Int(low)
    }

    // A lock, not an `Atomic`: `Atomic` needs iOS 18; one uncontended lock per file write is noise.
    private static let counter = Lock<UInt64>(0)
    /// Drawn once per process from the system's random source.
    private static let seed = UInt64.random(in: 0...UInt64.max)

    /// 64 bits that differ on every call in this process and, with overwhelming probability,
    /// from every value of every other process: the SplitMix64 finaliser of a random per-process
    /// seed plus a counter. One `getrandom` per process instead of one per write.
    static func uniqueRandom() -> UInt64 {
        var value =
            seed &+ counter.withLock { count in
                count &+= 1
                return count
            } &* 0x9E37_79B9_7F4A_7C15
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// What a name for an in-progress write starts with: the process id and a dash. The name
    /// goes on with 16 hex digits of `uniqueRandom` and `.part` (see `CacheLayout.newTemporaryPath`),
    /// so no other writer (thread, instance or process) uses it: even a process that reuses a
    /// dead one's pid cannot pick a name still on disk.
    static var temporaryNamePrefix: String { "\(Posix.processID)-" }

    /// The length of what follows `temporaryNamePrefix`: 16 hex digits and `.part`.
    static let temporaryNameTailLength = 21

    /// A unique name for a temporary file or directory beside the index (compaction, removeAll).
    static func uniqueSuffix() -> String {
        "\(Posix.processID)-\(String(uniqueRandom(), radix: 16))"
    }
}
