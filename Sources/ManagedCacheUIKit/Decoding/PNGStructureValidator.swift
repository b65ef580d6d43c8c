import ManagedCache

/// Walks a PNG's chunks (ISO/IEC 15948 and the APNG extension) and checks that the stream is
/// complete and uncorrupted, without inflating the image data.
///
/// Every chunk's CRC-32 over its type and data must match; IHDR must come first with a sane
/// header; at least one IDAT must follow (after PLTE for palette images); IEND must end the
/// chunk stream. Bytes after IEND are tolerated, as browsers do, because the IEND chunk and its
/// CRC already prove the image arrived whole.
enum PNGStructureValidator {
    /// The image header fields the rest of the walk depends on.
    private struct Header {
        var width: Int
        var height: Int
        var colorType: UInt8
    }

    /// The largest chunk length and dimension the specification allows, 2^31 - 1.
    private static let largestValue: UInt32 = 0x7FFF_FFFF

    /// Validates `reader`'s bytes, which start with the PNG signature.
    static func validate(_ reader: ImageByteReader) throws(ImageValidationError) -> ImageInfo {
        var offset = 8
        var header: Header?
        var hasPalette = false
        var imageDataChunkCount = 0
        var declaredFrameCount: Int?
        var frameControlCount = 0

        while true {
            guard offset < reader.count else {
                throw imageDataChunkCount > 0 ? .missingEndMarker(.png) : .truncated(.png)
            }
            let declaredLength = try reader.uint32BigEndian(at: offset)
            guard declaredLength <= largestValue else {
                throw .malformed(.png, reason: "a chunk declares length \(declaredLength), over 2^31 - 1")
            }
            let length = Int(declaredLength)
            let type = try reader.fourCharacterCode(at: offset + 4)
            let dataOffset = offset + 8
            try reader.require(length, at: dataOffset)
            let storedChecksum = try reader.uint32BigEndian(at: dataOffset + length)
            let computedChecksum = try checksum(of: reader.region(at: offset + 4, length: length + 4))
            guard storedChecksum == computedChecksum else { throw .checksumMismatch(.png, chunk: type) }
            guard isValidChunkType(reader.bytes, at: offset + 4) else {
                throw .malformed(.png, reason: "a chunk type contains bytes other than ASCII letters")
            }
            offset = dataOffset + length + 4

            if header == nil, type != "IHDR" {
                throw .malformed(.png, reason: "the first chunk is \(type), not IHDR")
            }
            switch type {
            case "IHDR":
                guard header == nil else { throw .malformed(.png, reason: "IHDR appears twice") }
                header = try readHeader(reader, at: dataOffset, length: length)
            case "PLTE":
                guard imageDataChunkCount == 0 else { throw .malformed(.png, reason: "PLTE follows IDAT") }
                guard length > 0, length % 3 == 0, length / 3 <= 256 else {
                    throw .malformed(.png, reason: "PLTE holds \(length) bytes, not 1 to 256 RGB entries")
                }
                hasPalette = true
            case "IDAT":
                if header?.colorType == 3, !hasPalette {
                    throw .malformed(.png, reason: "a palette image has no PLTE before IDAT")
                }
                imageDataChunkCount += 1
            case "acTL":
                guard length == 8, imageDataChunkCount == 0, declaredFrameCount == nil else {
                    throw .malformed(.png, reason: "acTL is misplaced, repeated or not 8 bytes")
                }
                let frames = try reader.uint32BigEndian(at: dataOffset)
                guard frames > 0, frames <= largestValue else {
                    throw .malformed(.png, reason: "acTL declares \(frames) frames")
                }
                declaredFrameCount = Int(frames)
            case "fcTL":
                frameControlCount += 1
            case "IEND":
                guard length == 0 else { throw .malformed(.png, reason: "IEND carries \(length) bytes of data") }
                guard imageDataChunkCount > 0 else { throw .malformed(.png, reason: "there is no IDAT chunk") }
                return try finish(
                    header: header, declaredFrameCount: declaredFrameCount,
                    frameControlCount: frameControlCount)
            default:
                // Bit 5 of the first byte clear marks a critical chunk, which a decoder must
                // understand to show the image correctly.
                guard reader.bytes[dataOffset - 4] & 0x20 != 0 else {
                    throw .malformed(.png, reason: "unknown critical chunk \(type)")
                }
            }
        }
    }

    private static func finish(
        header: Header?, declaredFrameCount: Int?, frameControlCount: Int
    ) throws(ImageValidationError) -> ImageInfo {
        guard let header else { throw .malformed(.png, reason: "there is no IHDR chunk") }
        var frameCount = 1
        if let declaredFrameCount {
            guard declaredFrameCount == frameControlCount else {
                throw .malformed(.png, reason: "acTL declares \(declaredFrameCount) frames but \(frameControlCount) fcTL chunks follow")
            }
            frameCount = declaredFrameCount
        }
        return ImageInfo(format: .png, pixelWidth: header.width, pixelHeight: header.height, frameCount: frameCount)
    }

    private static func readHeader(
        _ reader: ImageByteReader, at offset: Int, length: Int
    ) throws(ImageValidationError) -> Header {
        guard length == 13 else { throw .malformed(.png, reason: "IHDR is \(length) bytes, not 13") }
        let width = try reader.uint32BigEndian(at: offset)
        let height = try reader.uint32BigEndian(at: offset + 4)
        guard (1...largestValue).contains(width), (1...largestValue).contains(height) else {
            throw .invalidDimensions(.png)
        }
        let bitDepth = try reader.byte(at: offset + 8)
        let colorType = try reader.byte(at: offset + 9)
        let allowedBitDepths: [UInt8]
        switch colorType {
        case 0: allowedBitDepths = [1, 2, 4, 8, 16]  // greyscale
        case 3: allowedBitDepths = [1, 2, 4, 8]  // palette
        case 2, 4, 6: allowedBitDepths = [8, 16]  // RGB, grey + alpha, RGBA
        default: throw .malformed(.png, reason: "IHDR has unknown colour type \(colorType)")
        }
        guard allowedBitDepths.contains(bitDepth) else {
            throw .malformed(.png, reason: "bit depth \(bitDepth) is not allowed for colour type \(colorType)")
        }
        guard try reader.byte(at: offset + 10) == 0, try reader.byte(at: offset + 11) == 0 else {
            throw .malformed(.png, reason: "IHDR names an unknown compression or filter method")
        }
        guard try reader.byte(at: offset + 12) <= 1 else {
            throw .malformed(.png, reason: "IHDR names an unknown interlace method")
        }
        return Header(width: Int(width), height: Int(height), colorType: colorType)
    }

    private static func checksum(of region: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32()
        crc.update(region)
        return crc.value
    }

    /// Chunk types are four ASCII letters, upper or lower case.
    private static func isValidChunkType(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        bytes[offset..<(offset + 4)].allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }
}
