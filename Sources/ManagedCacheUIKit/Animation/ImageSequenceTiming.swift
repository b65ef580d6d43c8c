/// The timing of an image sequence whose frames a platform decoder describes (animated HEIC, or
/// HEICS: ImageIO's `kCGImagePropertyHEICSDictionary` of each frame), made into an
/// ``AnimationInfo`` by the rules every other format follows.
///
/// - A frame's duration is its unclamped delay when it declares one above zero, else its delay
///   (ImageIO clamps that one to at least 0.1 s), else 0 (which plays at 100 ms, as
///   ``AnimationInfo/playedDuration(ofDeclared:)`` says for tiny frames).
/// - The loop count is the sequence's `LoopCount`: 0, or none declared, plays forever (as ImageIO
///   writes an endlessly looping sequence); n plays n times.
/// - Fewer than two frames is not an animation.
struct ImageSequenceTiming: Sendable, Equatable {
    /// What the decoder reports of one frame, in seconds.
    struct Frame: Sendable, Equatable {
        var unclampedDelay: Double?
        var delay: Double?
    }

    var frames: [Frame]
    var loopCount: Int?

    /// The animation, or `nil` for fewer than two frames.
    var animation: AnimationInfo? {
        guard frames.count > 1 else { return nil }
        let durations = frames.map { frame -> Double in
            if let unclamped = frame.unclampedDelay, unclamped > 0 { return unclamped }
            return frame.delay ?? 0
        }
        let loops: AnimationInfo.LoopCount = if let loopCount, loopCount > 0 { .times(loopCount) } else { .forever }
        return AnimationInfo(frameDurations: durations, loopCount: loops)
    }
}
