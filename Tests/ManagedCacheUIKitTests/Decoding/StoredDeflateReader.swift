/// Reads a zlib stream made only of stored deflate blocks, checking its header and Adler-32:
/// an independent check of what the encoder writes.
enum StoredDeflateReader {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func inflate(zlib: [UInt8]) throws -> [UInt8] {
        guard zlib.count >= 6, (Int(zlib[0]) << 8 | Int(zlib[1])) % 31 == 0, zlib[0] & 0x0F == 8 else {
            throw Failure(description: "bad zlib header")
        }
        var output: [UInt8] = []
        var offset = 2
        var isFinal = false
        while !isFinal {
            guard offset + 5 <= zlib.count, zlib[offset] & 0x06 == 0 else {
                throw Failure(description: "expected a stored block at \(offset)")
            }
            isFinal = zlib[offset] & 0x01 == 1
            let length = Int(zlib[offset + 1]) | Int(zlib[offset + 2]) << 8
            let complement = Int(zlib[offset + 3]) | Int(zlib[offset + 4]) << 8
            guard length ^ complement == 0xFFFF, offset + 5 + length <= zlib.count else {
                throw Failure(description: "bad stored block length at \(offset)")
            }
            output += zlib[(offset + 5)..<(offset + 5 + length)]
            offset += 5 + length
        }
        guard offset + 4 == zlib.count else { throw Failure(description: "bytes after the final block") }
        let stored = zlib[offset...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        // Adler-32 the slow, obvious way.
        var low: UInt32 = 1
        var high: UInt32 = 0
        for byte in output {
            low = (low + UInt32(byte)) % 65_521
            high = (high + low) % 65_521
        }
        guard stored == high << 16 | low else { throw Failure(description: "Adler-32 mismatch") }
        return output
    }
}
