import Foundation
import ManagedCache

/// A PNG taken apart into its chunks and put back together with fresh CRCs, so tests can build
/// structurally wrong files whose checksums are still right.
struct PNGChunkList {
    struct Chunk {
        var type: String
        var data: [UInt8]
        /// Where the chunk's length field starts in the original file.
        var fileOffset: Int
    }

    var chunks: [Chunk]

    /// Splits a well-formed PNG; traps on anything else, since tests only feed it good files.
    init(_ png: Data) {
        let bytes = [UInt8](png)
        var offset = 8
        chunks = []
        while offset + 12 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append(Chunk(type: type, data: Array(bytes[(offset + 8)..<(offset + 8 + length)]), fileOffset: offset))
            offset += 12 + length
        }
    }

    /// The chunks written out after the PNG signature, each with a correct CRC.
    var data: Data {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        for chunk in chunks {
            bytes += Self.bigEndian(UInt32(chunk.data.count))
            let typeAndData = Array(chunk.type.utf8) + chunk.data
            bytes += typeAndData
            bytes += Self.bigEndian(CRC32.checksum(typeAndData))
        }
        return Data(bytes)
    }

    /// The concatenated IDAT payloads: the zlib stream.
    var zlibStream: [UInt8] {
        chunks.filter { $0.type == "IDAT" }.flatMap(\.data)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
