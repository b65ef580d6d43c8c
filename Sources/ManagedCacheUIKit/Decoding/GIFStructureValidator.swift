/// Walks a GIF's blocks (GIF89a specification) and checks that the stream is complete, without
/// decompressing the LZW data.
///
/// After the header and logical screen descriptor (with its optional global colour table) come
/// extensions (0x21) and images (0x2C, with an optional local colour table, the LZW minimum code
/// size and data sub-blocks); each image is one frame. The stream must reach the trailer (0x3B);
/// bytes after the trailer are tolerated.
enum GIFStructureValidator {
    private enum Introducer {
        static let extensionBlock: UInt8 = 0x21
        static let imageDescriptor: UInt8 = 0x2C
        static let trailer: UInt8 = 0x3B
    }

    /// The size of the header ("GIF89a") plus the logical screen descriptor.
    private static let headerLength = 6 + 7

    /// Validates `reader`'s bytes, which start with "GIF87a" or "GIF89a".
    static func validate(_ reader: ImageByteReader) throws(ImageValidationError) -> ImageInfo {
        try reader.require(headerLength, at: 0)
        let width = Int(try reader.uint16LittleEndian(at: 6))
        let height = Int(try reader.uint16LittleEndian(at: 8))
        let screenFlags = try reader.byte(at: 10)
        guard width > 0, height > 0 else { throw .invalidDimensions(.gif) }

        var offset = headerLength + colorTableLength(flags: screenFlags)
        var frameCount = 0

        while true {
            guard offset < reader.count else {
                throw frameCount > 0 ? .missingEndMarker(.gif) : .truncated(.gif)
            }
            let introducer = reader.bytes[offset]
            switch introducer {
            case Introducer.trailer:
                guard frameCount > 0 else { throw .malformed(.gif, reason: "the trailer comes before any image") }
                return ImageInfo(format: .gif, pixelWidth: width, pixelHeight: height, frameCount: frameCount)
            case Introducer.extensionBlock:
                // The label byte, then data sub-blocks whatever the extension is.
                try reader.require(2, at: offset)
                offset = try skipSubBlocks(reader, from: offset + 2)
            case Introducer.imageDescriptor:
                offset = try skipImage(reader, at: offset)
                frameCount += 1
            default:
                throw .malformed(.gif, reason: "unknown block introducer \(hex(introducer)) at byte \(offset)")
            }
        }
    }

    /// Skips an image descriptor, its local colour table and its image data; returns the offset
    /// after them.
    private static func skipImage(_ reader: ImageByteReader, at offset: Int) throws(ImageValidationError) -> Int {
        // Separator, left, top, width, height (two bytes each), then the packed fields.
        let imageFlags = try reader.byte(at: offset + 9)
        let tableEnd = offset + 10 + colorTableLength(flags: imageFlags)
        let minimumCodeSize = try reader.byte(at: tableEnd)
        // Code sizes grow to at most 12 bits, so the starting size must leave room for the
        // clear and end codes below that.
        guard (1...11).contains(minimumCodeSize) else {
            throw .malformed(.gif, reason: "LZW minimum code size \(minimumCodeSize) is out of range")
        }
        return try skipSubBlocks(reader, from: tableEnd + 1)
    }

    /// Skips data sub-blocks (a length byte and that many bytes, until a zero length); returns
    /// the offset after the terminating zero.
    /// Skips data sub-blocks from `start` to past their terminator (shared with `GIFAnimationReader`).
    static func skipSubBlocks(_ reader: ImageByteReader, from start: Int) throws(ImageValidationError) -> Int {
        var offset = start
        while true {
            let length = Int(try reader.byte(at: offset))
            offset += 1
            if length == 0 { return offset }
            try reader.require(length, at: offset)
            offset += length
        }
    }

    /// A colour table holds 2^(n+1) RGB entries when bit 7 of the packed fields is set.
    static func colorTableLength(flags: UInt8) -> Int {
        flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 0x07) + 1)
    }

    private static func hex(_ byte: UInt8) -> String {
        "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
    }
}
