/// Frame durations and the loop count of an animated WebP (the extended format's `ANIM` and
/// `ANMF` chunks).
///
/// `ANIM` holds the loop count after the background colour (0: forever; otherwise the number of
/// plays, as libwebp and Chrome read it); each `ANMF` is a frame whose 24-bit duration, in
/// milliseconds, follows its offset and size fields. A WebP without `ANIM` is a still image
/// (`nil`).
enum WebPAnimationReader {
    static func read(_ reader: ImageByteReader) throws(ImageValidationError) -> AnimationInfo? {
        try reader.require(12, at: 0)
        let end = min(reader.count, 8 + Int(try reader.uint32LittleEndian(at: 4)))
        var offset = 12
        var loops: Int?
        var durations: [Double] = []
        while offset + 8 <= end {
            let name = try reader.fourCharacterCode(at: offset)
            let size = Int(try reader.uint32LittleEndian(at: offset + 4))
            let payload = offset + 8
            try reader.require(size, at: payload)
            switch name {
            case "ANIM":
                loops = Int(try reader.uint16LittleEndian(at: payload + 4))
            case "ANMF":
                durations.append(Double(try reader.uint24LittleEndian(at: payload + 12)) / 1000)
            default:
                break
            }
            offset = payload + size + (size & 1)
        }
        guard let loops else { return nil }
        return AnimationInfo(frameDurations: durations, loopCount: loops == 0 ? .forever : .times(loops))
    }
}
