import Synchronization

/// The identity of one stored version of one key, and the file name derived from it.
///
/// A name is `<32 hex digits>-<16 hex digits>`: the first 128 bits of the SHA-256 of the key's
/// UTF-8 bytes, then a random 64-bit version chosen when the write starts. Names therefore contain
/// only `[0-9a-f-]`, have a fixed length of 49 bytes and cannot name anything outside their
/// directory, whatever the key. The version makes every write's file distinct: committing a new
/// version never overwrites the file an index record (or a reader in another process) points at,
/// so an index record always describes exactly the bytes of its own file.
struct FileID: Hashable, Sendable {
    var digestHigh: UInt64
    var digestLow: UInt64
    var version: UInt64

    /// The length of every entry file name.
    static let nameLength = 49

    /// A new identity for `key` with a fresh random version.
    static func makeNew(forKey key: String) -> FileID {
        let digest = SHA256.digest(key.utf8)
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(digest[index])
            low = low << 8 | UInt64(digest[8 + index])
        }
        return FileID(digestHigh: high, digestLow: low, version: FileNames.uniqueRandom() | 1)
    }

    /// Which of `count` buckets (a power of two up to 256) the entry belongs to: the top byte of its digest.
    func bucket(of count: Int) -> Int {
        count <= 1 ? 0 : Int(truncatingIfNeeded: digestHigh >> 56) & (count - 1)
    }

    /// The file name: 32 hex digits of digest, "-", 16 hex digits of version.
    var fileName: String {
        String(unsafeUninitializedCapacity: Self.nameLength) { buffer in
            FileNames.writeHex(digestHigh, into: buffer, at: 0)
            FileNames.writeHex(digestLow, into: buffer, at: 16)
            buffer[32] = UInt8(ascii: "-")
            FileNames.writeHex(version, into: buffer, at: 33)
            return Self.nameLength
        }
    }

    /// Parses a name made by `fileName`; nil for any other name.
    init?(fileName name: UnsafePointer<CChar>) {
        var values: [UInt64] = [0, 0, 0]
        var position = 0
        for part in 0..<3 {
            if part == 2 {
                guard name[position] == 0x2D else { return nil }  // "-"
                position += 1
            }
            var value: UInt64 = 0
            for _ in 0..<16 {
                guard let digit = FileNames.hexValue(UInt8(bitPattern: name[position])) else { return nil }
                value = value << 4 | UInt64(digit)
                position += 1
            }
            values[part] = value
        }
        guard name[position] == 0 else { return nil }
        self.init(digestHigh: values[0], digestLow: values[1], version: values[2])
    }

    init(digestHigh: UInt64, digestLow: UInt64, version: UInt64) {
        self.digestHigh = digestHigh
        self.digestLow = digestLow
        self.version = version
    }
}

/// Helpers for the names of files and directories in a cache.
enum FileNames {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes `value` as 16 lowercase hex digits at `offset`.
    static func writeHex(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        for index in 0..<16 {
            let nibble = Int(truncatingIfNeeded: value >> UInt64(60 - index * 4)) & 0xF
            buffer[offset + index] = digits[nibble]
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
            buffer[0] = digits[(bucket >> 4) & 0xF]
            buffer[1] = digits[bucket & 0xF]
            return 2
        }
    }

    /// The bucket a directory name denotes ("00" … "ff"), or nil.
    static func bucket(named name: UnsafePointer<CChar>) -> Int? {
        guard let high = hexValue(UInt8(bitPattern: name[0])), let low = hexValue(UInt8(bitPattern: name[1])),
              name[2] == 0 else { return nil }
        return Int(high) << 4 | Int(low)
    }

    private static let counter = Atomic<UInt64>(0)
    /// Drawn once per process from the system's random source.
    private static let seed = UInt64.random(in: 0...UInt64.max)

    /// 64 bits that differ on every call in this process and, with overwhelming probability,
    /// from every value of every other process: the SplitMix64 finaliser of a random per-process
    /// seed plus a counter. One `getrandom` per process instead of one per write.
    static func uniqueRandom() -> UInt64 {
        var value = seed &+ counter.wrappingAdd(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A name for an in-progress write that no other writer (thread, instance or process) uses:
    /// the process id and 64 bits from `uniqueRandom`, so even a process that reuses a dead one's
    /// pid cannot pick a name still on disk.
    static func temporaryName() -> String {
        "\(Posix.processID)-\(String(uniqueRandom(), radix: 16)).part"
    }

    /// A unique name for a temporary file or directory beside the index (compaction, removeAll).
    static func uniqueSuffix() -> String {
        "\(Posix.processID)-\(String(uniqueRandom(), radix: 16))"
    }
}
