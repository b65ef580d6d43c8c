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
        let (high, low) = SHA256.first128Bits(key.utf8)
        return FileID(digestHigh: high, digestLow: low, version: FileNames.uniqueRandom() | 1)
    }

    /// Which of `count` buckets (a power of two up to 256) the entry belongs to: the top byte of its digest.
    func bucket(of count: Int) -> Int {
        count <= 1 ? 0 : Int(truncatingIfNeeded: digestHigh >> 56) & (count - 1)
    }

    /// The file name: 32 hex digits of digest, "-", 16 hex digits of version.
    var fileName: String {
        String(unsafeUninitializedCapacity: Self.nameLength) { buffer in
            writeName(into: buffer, at: 0)
            return Self.nameLength
        }
    }

    /// Writes `fileName`'s `nameLength` bytes into `buffer` at `offset`.
    func writeName(into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        FileNames.writeHex(digestHigh, into: buffer, at: offset)
        FileNames.writeHex(digestLow, into: buffer, at: offset + 16)
        buffer[offset + 32] = UInt8(ascii: "-")
        FileNames.writeHex(version, into: buffer, at: offset + 33)
    }

    /// Parses a name made by `fileName`; nil for any other name. (No array of the three parts: a
    /// listing parses every name of `ready/`, a million after a crash.)
    init?(fileName name: UnsafePointer<CChar>) {
        func hex(at start: Int) -> UInt64? {
            var value: UInt64 = 0
            for position in start..<start + 16 {
                guard let digit = FileNames.hexValue(UInt8(bitPattern: name[position])) else { return nil }
                value = value << 4 | UInt64(digit)
            }
            return value
        }
        // Each part is checked before the next is read: a shorter name ends at its NUL, which is
        // no hex digit, so nothing past it is read.
        guard let high = hex(at: 0), let low = hex(at: 16), name[32] == 0x2D,  // "-"
            let version = hex(at: 33), name[49] == 0
        else { return nil }
        self.init(digestHigh: high, digestLow: low, version: version)
    }

    init(digestHigh: UInt64, digestLow: UInt64, version: UInt64) {
        self.digestHigh = digestHigh
        self.digestLow = digestLow
        self.version = version
    }
}
