/// How many bytes of decoded frames an animation's frame buffer may keep: the rule behind
/// `DecodedImage.frameBufferByteLimit`, the same on every platform.
///
/// The first frame is the image's own bitmap and is not in the buffer. If every other frame fits
/// in `limit`, the buffer keeps them all (a small GIF is decoded once, however long it loops);
/// otherwise it keeps as many whole frames as fit, and never fewer than two (the one showing and
/// the next), so a large animation still plays, decoding frames again on each loop.
///
/// `frameByteCount` is the first frame's `DecodedImage.decodedByteCount` (`BitmapFootprint`:
/// bytes per row × rows), the same count the frame buffer charges for each frame it keeps, so
/// "every frame fits" here is a promise the buffer keeps, with row padding and 16-bit frames too.
enum AnimationFrameBudget {
    /// The byte limit for an animation of `frameCount` frames of `frameByteCount` bytes each,
    /// given `limit`; 0 for a still image.
    static func byteLimit(frameByteCount: Int, frameCount: Int, limit: Int) -> Int {
        guard frameCount > 1, frameByteCount > 0 else { return 0 }
        let (all, overflow) = frameByteCount.multipliedReportingOverflow(by: frameCount - 1)
        if !overflow, all <= max(0, limit) { return all }
        let fitting = max(2, max(0, limit) / frameByteCount)
        let frames = min(fitting, frameCount - 1)
        let (bytes, tooLarge) = frameByteCount.multipliedReportingOverflow(by: frames)
        return tooLarge ? Int.max : bytes
    }
}
