/// Walks a WebP's RIFF container (the WebP container specification, RFC 9649) and checks that
/// it is complete and self-consistent, without decoding the bitstreams.
///
/// The RIFF size must fit in the data (bytes after it are tolerated); every chunk must fit in
/// its container, padded to an even length. The first chunk decides the layout: a lone VP8
/// (lossy) or VP8L (lossless) bitstream, or VP8X (extended) with a canvas size, in which case a
/// still image needs a bitstream of the canvas size and an animation needs ANIM and at least one
/// ANMF frame that fits the canvas. Bitstream headers are checked as far as their dimensions:
/// the VP8 key-frame tag and start code, or the VP8L signature and version.
enum WebPStructureValidator {
    /// A chunk found inside the RIFF payload or inside an ANMF frame.
    private struct Chunk {
        /// The FourCC, such as "VP8 " or "ANMF".
        let name: String
        /// Where the chunk's payload starts.
        let payloadOffset: Int
        /// The payload's size, without the padding byte.
        let size: Int
    }

    private typealias Dimensions = (width: Int, height: Int)

    /// The "RIFF", size and "WEBP" fields.
    private static let riffHeaderLength = 12

    /// Validates `reader`'s bytes, which start with "RIFF", a size and "WEBP".
    static func validate(_ reader: ImageByteReader) throws(ImageValidationError) -> ImageInfo {
        try reader.require(riffHeaderLength, at: 0)
        let riffSize = try reader.uint32LittleEndian(at: 4)
        // The RIFF size counts everything after the size field; more bytes than that are
        // harmless, fewer mean the file was cut short.
        guard UInt64(riffSize) + 8 <= UInt64(reader.count) else { throw .truncated(.webp) }
        guard riffSize >= 4 + 8 else { throw .malformed(.webp, reason: "the RIFF payload cannot hold a chunk") }
        let chunks = try readChunks(reader, from: riffHeaderLength, to: 8 + Int(riffSize))

        guard let first = chunks.first else { throw .malformed(.webp, reason: "there are no chunks") }
        switch first.name {
        case "VP8 ", "VP8L":
            let size = try bitstreamDimensions(reader, of: first)
            return ImageInfo(format: .webp, pixelWidth: size.width, pixelHeight: size.height)
        case "VP8X":
            return try validateExtended(reader, header: first, following: chunks.dropFirst())
        default:
            throw .malformed(.webp, reason: "the first chunk is \(first.name), not VP8, VP8L or VP8X")
        }
    }

    /// Checks the extended layout: VP8X, then either a still bitstream or ANIM and ANMF frames.
    private static func validateExtended(
        _ reader: ImageByteReader, header: Chunk, following chunks: ArraySlice<Chunk>
    ) throws(ImageValidationError) -> ImageInfo {
        guard header.size >= 10 else { throw .malformed(.webp, reason: "VP8X is \(header.size) bytes, not 10") }
        let flags = try reader.byte(at: header.payloadOffset)
        let canvasWidth = Int(try reader.uint24LittleEndian(at: header.payloadOffset + 4)) + 1
        let canvasHeight = Int(try reader.uint24LittleEndian(at: header.payloadOffset + 7)) + 1
        guard UInt64(canvasWidth) * UInt64(canvasHeight) <= UInt64(UInt32.max) else {
            throw .invalidDimensions(.webp)
        }
        let canvas: Dimensions = (canvasWidth, canvasHeight)

        guard flags & 0x02 != 0 else {
            guard let image = chunks.first(where: isBitstream) else {
                throw .malformed(.webp, reason: "the extended file has no VP8 or VP8L image")
            }
            let size = try bitstreamDimensions(reader, of: image)
            guard size == canvas else {
                throw .malformed(
                    .webp, reason: "the \(size.width)x\(size.height) image does not match the \(canvas.width)x\(canvas.height) canvas")
            }
            return ImageInfo(format: .webp, pixelWidth: canvas.width, pixelHeight: canvas.height)
        }

        let firstFrame = chunks.firstIndex { $0.name == "ANMF" } ?? chunks.endIndex
        guard chunks[..<firstFrame].contains(where: { $0.name == "ANIM" && $0.size >= 6 }) else {
            throw .malformed(.webp, reason: "the animation has no ANIM chunk before its frames")
        }
        var frameCount = 0
        for chunk in chunks[firstFrame...] where chunk.name == "ANMF" {
            try validateFrame(reader, chunk, canvas: canvas)
            frameCount += 1
        }
        guard frameCount > 0 else { throw .malformed(.webp, reason: "the animation has no ANMF frames") }
        return ImageInfo(format: .webp, pixelWidth: canvas.width, pixelHeight: canvas.height, frameCount: frameCount)
    }

    /// Checks an ANMF frame: its rectangle fits the canvas and it holds a bitstream of its size.
    private static func validateFrame(
        _ reader: ImageByteReader, _ frame: Chunk, canvas: Dimensions
    ) throws(ImageValidationError) {
        let start = frame.payloadOffset
        guard frame.size >= 16 else { throw .malformed(.webp, reason: "an ANMF chunk is \(frame.size) bytes") }
        // Offsets are stored halved; sizes are stored minus one.
        let left = 2 * Int(try reader.uint24LittleEndian(at: start))
        let top = 2 * Int(try reader.uint24LittleEndian(at: start + 3))
        let width = Int(try reader.uint24LittleEndian(at: start + 6)) + 1
        let height = Int(try reader.uint24LittleEndian(at: start + 9)) + 1
        guard left + width <= canvas.width, top + height <= canvas.height else {
            throw .malformed(.webp, reason: "an animation frame extends past the canvas")
        }
        let frameChunks = try readChunks(reader, from: start + 16, to: start + frame.size)
        guard let image = frameChunks.first(where: isBitstream) else {
            throw .malformed(.webp, reason: "an animation frame has no VP8 or VP8L image")
        }
        guard try bitstreamDimensions(reader, of: image) == (width, height) else {
            throw .malformed(.webp, reason: "an animation frame's image does not match its \(width)x\(height) rectangle")
        }
    }

    /// The dimensions in a VP8 or VP8L bitstream's header.
    private static func bitstreamDimensions(
        _ reader: ImageByteReader, of chunk: Chunk
    ) throws(ImageValidationError) -> Dimensions {
        let start = chunk.payloadOffset
        if chunk.name == "VP8L" {
            guard chunk.size >= 5, try reader.byte(at: start) == 0x2F else {
                throw .malformed(.webp, reason: "the VP8L chunk lacks its 0x2F signature")
            }
            let bits = try reader.uint32LittleEndian(at: start + 1)
            guard bits >> 29 == 0 else { throw .malformed(.webp, reason: "unknown VP8L version \(bits >> 29)") }
            return (Int(bits & 0x3FFF) + 1, Int((bits >> 14) & 0x3FFF) + 1)
        }
        // VP8: a 3-byte frame tag, the start code 9D 01 2A, then 14-bit width and height
        // (the top two bits of each are a scaling hint).
        guard chunk.size >= 10 else { throw .malformed(.webp, reason: "the VP8 chunk is \(chunk.size) bytes") }
        let tag = try reader.uint24LittleEndian(at: start)
        guard tag & 0x01 == 0 else { throw .malformed(.webp, reason: "the VP8 data is not a key frame") }
        guard (tag >> 1) & 0x07 <= 3 else { throw .malformed(.webp, reason: "unknown VP8 profile") }
        guard (tag >> 4) & 0x01 == 1 else { throw .malformed(.webp, reason: "the VP8 key frame is not shown") }
        guard Int(tag >> 5) <= chunk.size - 10 else {
            throw .malformed(.webp, reason: "the VP8 first partition runs past its chunk")
        }
        guard try reader.byte(at: start + 3) == 0x9D, try reader.byte(at: start + 4) == 0x01,
            try reader.byte(at: start + 5) == 0x2A
        else { throw .malformed(.webp, reason: "the VP8 key frame lacks its start code") }
        let width = Int(try reader.uint16LittleEndian(at: start + 6) & 0x3FFF)
        let height = Int(try reader.uint16LittleEndian(at: start + 8) & 0x3FFF)
        guard width > 0, height > 0 else { throw .invalidDimensions(.webp) }
        return (width, height)
    }

    /// The chunks laid end to end from `start` up to `end`. Each must fit before `end`; a
    /// missing pad byte after the last one is tolerated.
    private static func readChunks(
        _ reader: ImageByteReader, from start: Int, to end: Int
    ) throws(ImageValidationError) -> [Chunk] {
        var chunks: [Chunk] = []
        var offset = start
        while offset < end {
            guard end - offset >= 8 else {
                throw .malformed(.webp, reason: "a chunk header runs past the end of its container")
            }
            let name = try reader.fourCharacterCode(at: offset)
            let size = try reader.uint32LittleEndian(at: offset + 4)
            guard UInt64(size) <= UInt64(end - offset - 8) else {
                throw .malformed(.webp, reason: "chunk \(name) runs past the end of its container")
            }
            chunks.append(Chunk(name: name, payloadOffset: offset + 8, size: Int(size)))
            offset += 8 + Int(size) + Int(size & 1)
        }
        return chunks
    }

    private static func isBitstream(_ chunk: Chunk) -> Bool {
        chunk.name == "VP8 " || chunk.name == "VP8L"
    }
}
