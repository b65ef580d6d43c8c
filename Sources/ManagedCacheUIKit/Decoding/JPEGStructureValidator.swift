/// Walks a JPEG's marker segments (ITU T.81, Annex B) and checks that the stream is complete,
/// without decoding the entropy-coded data.
///
/// After SOI, every marker segment is skipped by its declared length; a frame header (SOFn)
/// supplies the dimensions; after each SOS the entropy-coded data is scanned for the next real
/// marker, stepping over stuffed zero bytes (FF00), restart markers (RSTn) and fill bytes.
/// Progressive files simply have several scans. The stream must end with EOI; bytes after EOI
/// are tolerated because cameras and editors often leave some there.
enum JPEGStructureValidator {
    private enum Marker {
        static let startOfImage: UInt8 = 0xD8
        static let endOfImage: UInt8 = 0xD9
        static let startOfScan: UInt8 = 0xDA
        /// APP1: EXIF metadata, where the orientation is.
        static let app1: UInt8 = 0xE1
        static let temporary: UInt8 = 0x01
        static let restarts: ClosedRange<UInt8> = 0xD0...0xD7

        /// SOF0 to SOF15, less DHT (C4), JPG (C8) and DAC (CC), which share the range.
        static func isStartOfFrame(_ marker: UInt8) -> Bool {
            (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
        }
    }

    /// Validates `reader`'s bytes, which start with SOI.
    static func validate(_ reader: ImageByteReader) throws(ImageValidationError) -> ImageInfo {
        var offset = 2
        var dimensions: (width: Int, height: Int)?
        var scanCount = 0
        var orientation = ImageOrientation.up

        while true {
            guard offset < reader.count else {
                throw scanCount > 0 ? .missingEndMarker(.jpeg) : .truncated(.jpeg)
            }
            guard reader.bytes[offset] == 0xFF else {
                throw .malformed(.jpeg, reason: "expected a marker at byte \(offset)")
            }
            // Any number of 0xFF fill bytes may precede a marker code.
            while offset < reader.count, reader.bytes[offset] == 0xFF { offset += 1 }
            guard offset < reader.count else { throw .truncated(.jpeg) }
            let marker = reader.bytes[offset]
            offset += 1

            switch marker {
            case Marker.endOfImage:
                guard let dimensions else { throw .malformed(.jpeg, reason: "EOI comes before any frame header") }
                guard scanCount > 0 else { throw .malformed(.jpeg, reason: "EOI comes before any scan") }
                return ImageInfo(
                    format: .jpeg, pixelWidth: dimensions.width, pixelHeight: dimensions.height,
                    orientation: orientation)
            case Marker.startOfImage:
                throw .malformed(.jpeg, reason: "a second SOI marker appears")
            case 0x00:
                throw .malformed(.jpeg, reason: "a stuffed zero byte appears outside a scan")
            case Marker.temporary, Marker.restarts:
                continue  // Stand-alone markers without a length; stray RSTn are harmless.
            default:
                break
            }

            let segmentLength = Int(try reader.uint16BigEndian(at: offset))
            guard segmentLength >= 2 else {
                throw .malformed(.jpeg, reason: "a marker segment declares length \(segmentLength)")
            }
            try reader.require(segmentLength, at: offset)
            let segmentEnd = offset + segmentLength

            if marker == Marker.app1, dimensions == nil,
                let exif = ImageOrientation.exif(UnsafeRawBufferPointer(rebasing: reader.bytes[(offset + 2)..<segmentEnd]))
            {
                orientation = exif
            } else if Marker.isStartOfFrame(marker), dimensions == nil {
                dimensions = try readFrameHeader(reader, at: offset + 2, length: segmentLength)
            } else if marker == Marker.startOfScan {
                guard dimensions != nil else { throw .malformed(.jpeg, reason: "a scan comes before the frame header") }
                scanCount += 1
                guard case (true, let nextMarker) = JPEGEntropyCodedData.end(in: reader.bytes, from: segmentEnd) else {
                    throw .missingEndMarker(.jpeg)
                }
                offset = nextMarker
                continue
            }
            offset = segmentEnd
        }
    }

    /// Reads SOFn: precision, height, width, then three bytes per component.
    private static func readFrameHeader(
        _ reader: ImageByteReader, at offset: Int, length: Int
    ) throws(ImageValidationError) -> (width: Int, height: Int) {
        guard length >= 8 else { throw .malformed(.jpeg, reason: "the frame header is \(length) bytes") }
        let height = Int(try reader.uint16BigEndian(at: offset + 1))
        let width = Int(try reader.uint16BigEndian(at: offset + 3))
        let componentCount = Int(try reader.byte(at: offset + 5))
        guard componentCount > 0, length == 8 + 3 * componentCount else {
            throw .malformed(.jpeg, reason: "the frame header's length does not fit its \(componentCount) components")
        }
        // A height of zero defers to a DNL marker, which nothing on the web uses; without it the
        // size is unknown, so it is rejected along with a zero width.
        guard width > 0, height > 0 else { throw .invalidDimensions(.jpeg) }
        return (width, height)
    }
}
