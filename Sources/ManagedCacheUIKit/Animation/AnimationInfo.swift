import Foundation

/// How an animated image plays: how long each frame shows and how many times the animation plays
/// through. Read from the bytes on every platform (GIF, APNG, animated WebP) with no decoder;
/// `DecodedImage.animation` carries it.
///
/// Durations are the ones a browser plays: a frame that declares 10 ms or less shows for 100 ms
/// (see `playedDuration(ofDeclared:)`).
///
/// ```swift
/// func describe(_ image: DecodedImage) {
///     if let animation = image.animation {
///         print(animation.frameCount, animation.loopDuration, animation.loopCount)  // 4 0.33 times(3)
///     }
/// }
/// ```
public struct AnimationInfo: Sendable, Hashable {
    /// How many times an animation plays through.
    public enum LoopCount: Sendable, Hashable {
        /// It starts again after its last frame, for as long as it is shown.
        case forever
        /// It plays this many times in all (at least 1), then stays on its last frame.
        case times(Int)
    }

    /// How long each frame shows, in seconds, in order; never empty, every value above 10 ms.
    public let frameDurations: [Double]
    /// How many times the animation plays through.
    public let loopCount: LoopCount
    /// When each frame starts within one loop: `frameStarts[0] == 0`, and the next frame starts
    /// when the previous one's duration has passed.
    let frameStarts: [Double]

    /// Frames declaring this long or less play at `clampedFrameDuration` (10 ms).
    public static let tinyFrameDuration = 0.010
    /// What tiny frames play at (100 ms).
    public static let clampedFrameDuration = 0.100

    /// Creates the description of an animation.
    ///
    /// - Parameters:
    ///   - frameDurations: The declared duration of each frame, in seconds. Durations of 10 ms or
    ///     less (and negative ones) become 100 ms; an empty list becomes one frame of 100 ms.
    ///   - loopCount: How many times it plays; `.times` of less than 1 means once.
    public init(frameDurations: [Double], loopCount: LoopCount) {
        let played = frameDurations.isEmpty ? [Self.clampedFrameDuration] : frameDurations.map(Self.playedDuration(ofDeclared:))
        self.frameDurations = played
        if case .times(let count) = loopCount, count < 1 {
            self.loopCount = .times(1)
        } else {
            self.loopCount = loopCount
        }
        var starts: [Double] = []
        starts.reserveCapacity(played.count)
        var elapsed = 0.0
        for duration in played {
            starts.append(elapsed)
            elapsed += duration
        }
        frameStarts = starts
    }

    /// Reads the animation of GIF, APNG or animated WebP bytes; `nil` for a still image, another
    /// format, or bytes whose animation structure cannot be read. Cheap: nothing is decompressed.
    ///
    /// - Parameter data: The image's bytes.
    public init?(parsing data: Data) {
        guard let animation = AnimationReader.read(data) else { return nil }
        self = animation
    }

    /// How many frames the animation has.
    public var frameCount: Int { frameDurations.count }

    /// How long one play through all frames takes, in seconds.
    public var loopDuration: Double { (frameStarts.last ?? 0) + (frameDurations.last ?? 0) }

    /// How long the whole animation plays, in seconds; `nil` when it loops forever.
    public var totalDuration: Double? {
        guard case .times(let count) = loopCount else { return nil }
        return loopDuration * Double(count)
    }

    /// The duration a browser plays for a frame that declares `seconds`: old GIFs declare 0 or
    /// 10 ms to mean "as fast as you can", which browsers (and this package) play at 100 ms.
    /// The rule applies to every format, so one kind of file does not play faster than another.
    ///
    /// - Parameter seconds: The duration the file declares.
    /// - Returns: `seconds`, or 100 ms for 10 ms or less (or a value that is not finite).
    public static func playedDuration(ofDeclared seconds: Double) -> Double {
        // A hair of tolerance: 1/100 s computed from a fraction must count as 10 ms.
        seconds.isFinite && seconds > tinyFrameDuration + 1e-9 ? seconds : clampedFrameDuration
    }

    /// Equal when the durations (as played) and the loop count are.
    ///
    /// - Parameters:
    ///   - lhs: An animation.
    ///   - rhs: Another animation.
    /// - Returns: `true` when both play alike.
    public static func == (lhs: AnimationInfo, rhs: AnimationInfo) -> Bool {
        lhs.frameDurations == rhs.frameDurations && lhs.loopCount == rhs.loopCount
    }

    /// Hashes the durations and the loop count.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(frameDurations)
        hasher.combine(loopCount)
    }
}
