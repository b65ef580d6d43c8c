/// The checksum an index record keeps of its entry's bytes: XXH64 for entries written by this
/// version (journal record type 8), CRC-32 for entries journaled before it (type 2), which stay
/// readable and are checked with their own algorithm. See `XXH64` for why the change.
enum EntryChecksum: Sendable, Hashable {
    case crc32(UInt32)
    case xxh64(UInt64)

    /// Computes, over bytes fed in pieces, a checksum of the same kind as `expected`, to compare with it.
    struct Verifier {
        private var crc: CRC32?
        private var xxh: XXH64?

        init(like expected: EntryChecksum) {
            switch expected {
            case .crc32: crc = CRC32()
            case .xxh64: xxh = XXH64()
            }
        }

        mutating func update(_ buffer: UnsafeRawBufferPointer) {
            if crc != nil { crc!.update(buffer) }
            if xxh != nil { xxh!.update(buffer) }
        }

        var value: EntryChecksum {
            if let crc { return .crc32(crc.value) }
            return .xxh64(xxh?.value ?? XXH64().value)
        }
    }

    /// Whether `buffer` (an entry's whole contents) has this checksum.
    func matches(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var verifier = Verifier(like: self)
        verifier.update(buffer)
        return verifier.value == self
    }
}
