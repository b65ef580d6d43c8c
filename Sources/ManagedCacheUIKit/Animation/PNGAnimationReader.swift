/// Frame delays and the play count of an animated PNG (the APNG extension).
///
/// `acTL` gives `num_plays` (0: forever); each `fcTL` starts a frame, its delay the fraction
/// `delay_num / delay_den` seconds (a denominator of 0 means 100). A default image (an `IDAT`
/// with no `fcTL` before it) is not a frame of the animation. A PNG without `acTL` is a still
/// image (`nil`).
enum PNGAnimationReader {
    static func read(_ reader: ImageByteReader) throws(ImageValidationError) -> AnimationInfo? {
        var offset = 8
        var plays: Int?
        var durations: [Double] = []
        while offset + 8 <= reader.count {
            let length = Int(try reader.uint32BigEndian(at: offset))
            let type = try reader.fourCharacterCode(at: offset + 4)
            let data = offset + 8
            try reader.require(length, at: data)
            switch type {
            case "acTL":
                plays = Int(try reader.uint32BigEndian(at: data + 4))
            case "fcTL":
                guard length >= 26 else { throw .malformed(.png, reason: "fcTL is \(length) bytes") }
                let numerator = Double(try reader.uint16BigEndian(at: data + 20))
                let denominator = try reader.uint16BigEndian(at: data + 22)
                durations.append(numerator / Double(denominator == 0 ? 100 : denominator))
            case "IEND":
                guard let plays else { return nil }
                return AnimationInfo(frameDurations: durations, loopCount: plays == 0 ? .forever : .times(plays))
            default:
                break
            }
            offset = data + length + 4
        }
        throw .missingEndMarker(.png)
    }
}
