/// Frame delays and the loop count of a GIF (GIF89a).
///
/// - A graphic control extension (0x21 0xF9) before an image gives that image's delay in
///   hundredths of a second; an image without one has no delay (it plays at 100 ms, like every
///   tiny delay).
/// - The NETSCAPE2.0 (or ANIMEXTS1.0) application extension holds a loop count: the number of
///   times the animation repeats after playing once, as Chrome and Firefox read it (2 plays three
///   times), 0 forever. Without it the animation plays once.
enum GIFAnimationReader {
    private static let headerLength = 6 + 7

    static func read(_ reader: ImageByteReader) throws(ImageValidationError) -> AnimationInfo {
        try reader.require(headerLength, at: 0)
        var offset = headerLength + GIFStructureValidator.colorTableLength(flags: try reader.byte(at: 10))
        var durations: [Double] = []
        var pendingDelay: Double?
        var repetitions: Int?

        while offset < reader.count {
            switch try reader.byte(at: offset) {
            case 0x3B:  // trailer
                return AnimationInfo(frameDurations: durations, loopCount: loopCount(repetitions: repetitions))
            case 0x21:
                let label = try reader.byte(at: offset + 1)
                if label == 0xF9, try reader.byte(at: offset + 2) >= 4 {
                    pendingDelay = Double(try reader.uint16LittleEndian(at: offset + 4)) / 100
                } else if label == 0xFF, let count = try loopExtensionCount(reader, at: offset + 2) {
                    repetitions = count
                }
                offset = try GIFStructureValidator.skipSubBlocks(reader, from: offset + 2)
            case 0x2C:
                let flags = try reader.byte(at: offset + 9)
                let tableEnd = offset + 10 + GIFStructureValidator.colorTableLength(flags: flags)
                offset = try GIFStructureValidator.skipSubBlocks(reader, from: tableEnd + 1)  // after the LZW minimum code size
                durations.append(pendingDelay ?? 0)
                pendingDelay = nil
            default:
                throw .malformed(.gif, reason: "unknown block at byte \(offset)")
            }
        }
        throw .missingEndMarker(.gif)
    }

    /// The repetition count of a NETSCAPE2.0 / ANIMEXTS1.0 block whose first sub-block starts at
    /// `offset`, or `nil` for another application extension.
    private static func loopExtensionCount(_ reader: ImageByteReader, at offset: Int) throws(ImageValidationError) -> Int? {
        guard try reader.byte(at: offset) == 11 else { return nil }
        let identifier = String(decoding: try reader.region(at: offset + 1, length: 11), as: UTF8.self)
        guard identifier == "NETSCAPE2.0" || identifier == "ANIMEXTS1.0" else { return nil }
        let dataStart = offset + 12
        // Sub-block of 3 bytes: id 1, then the count (little-endian).
        guard try reader.byte(at: dataStart) >= 3, try reader.byte(at: dataStart + 1) == 1 else { return nil }
        return Int(try reader.uint16LittleEndian(at: dataStart + 2))
    }

    private static func loopCount(repetitions: Int?) -> AnimationInfo.LoopCount {
        guard let repetitions else { return .times(1) }
        return repetitions == 0 ? .forever : .times(repetitions + 1)
    }
}
