/// Which frame of an animation shows at a given time: a playhead driven by timestamps, with no
/// timer of its own. `ManagedImageView` keeps one per view and asks it on every screen refresh;
/// a custom view can do the same.
///
/// It is a pure function of time: if the display falls behind (a busy main thread, a dropped
/// refresh), the next question gets the frame that should show *now* — frames in between are
/// skipped, never played late, so an animation never slows down. Paused time does not count.
/// When a `.times(n)` animation has played `n` times it stays on its last frame.
///
/// ```swift
/// let animation = AnimationInfo(frameDurations: [0.1, 0.1, 0.2], loopCount: .forever)
/// let now = 100.0  // seconds on a monotonic clock, such as CACurrentMediaTime()
/// var clock = AnimationClock(animation: animation, startTime: now)
/// let position = clock.position(at: now + 0.35)  // frame 2, loop 0, the next frame due in 0.05 s
/// clock.pause(at: now + 1)
/// clock.resume(at: now + 5)  // carries on from where it paused
/// print(position.frameIndex, clock.position(at: now + 5).elapsed)  // 2 1.0
/// ```
///
/// Times are seconds on any monotonic clock (`CACurrentMediaTime()`, a display link's
/// timestamp, or a test's virtual clock); they only need to be consistent.
public struct AnimationClock: Sendable, Hashable {
    /// Where the playhead is.
    public struct Position: Sendable, Hashable {
        /// The frame to show.
        public var frameIndex: Int
        /// Which play-through it is in, from 0.
        public var loop: Int
        /// Whether a `.times(n)` animation has played out (it then shows its last frame for good).
        public var isFinished: Bool
        /// Seconds of playing time (pauses left out) since the start.
        public var elapsed: Double
        /// Seconds of playing time from now until the frame changes; `nil` once finished.
        public var untilNextFrame: Double?
    }

    /// The animation played.
    public let animation: AnimationInfo
    /// Playing time accumulated before the last resume (or start).
    private var playedBeforeResume: Double
    /// When playing resumed (or started); `nil` while paused.
    private var resumedAt: Double?

    /// A clock that starts playing an animation from its first frame.
    ///
    /// - Parameters:
    ///   - animation: The animation to play.
    ///   - startTime: When it starts, in seconds on the clock the later calls use.
    public init(animation: AnimationInfo, startTime: Double) {
        self.animation = animation
        playedBeforeResume = 0
        resumedAt = startTime
    }

    /// Whether the clock is paused.
    public var isPaused: Bool { resumedAt == nil }

    /// Stops time at `time`: the position stays where it is until `resume(at:)`. Pausing a paused
    /// clock changes nothing.
    ///
    /// - Parameter time: When it pauses.
    public mutating func pause(at time: Double) {
        guard let resumedAt else { return }
        playedBeforeResume += max(0, time - resumedAt)
        self.resumedAt = nil
    }

    /// Starts time again at `time`, from where it was paused. Resuming a running clock changes nothing.
    ///
    /// - Parameter time: When it resumes.
    public mutating func resume(at time: Double) {
        guard resumedAt == nil else { return }
        resumedAt = time
    }

    /// Goes back to the first frame at `time`, keeping the paused or running state.
    ///
    /// - Parameter time: When it goes back.
    public mutating func rewind(at time: Double) {
        playedBeforeResume = 0
        if resumedAt != nil { resumedAt = time }
    }

    /// Playing time at `time`: time since the start, less the pauses. A time before the last
    /// resume counts as that resume.
    ///
    /// - Parameter time: A moment on the clock's time line.
    /// - Returns: Seconds of playing time at that moment.
    public func elapsed(at time: Double) -> Double {
        playedBeforeResume + (resumedAt.map { max(0, time - $0) } ?? 0)
    }

    /// Where the playhead is at a moment.
    ///
    /// - Parameter time: A moment on the clock's time line.
    /// - Returns: The frame to show, its loop, and when the next frame is due.
    public func position(at time: Double) -> Position {
        position(elapsed: elapsed(at: time))
    }

    /// Where the playhead is after some playing time.
    ///
    /// - Parameter elapsed: Seconds of playing time since the start, pauses left out.
    /// - Returns: The frame to show, its loop, and when the next frame is due.
    public func position(elapsed: Double) -> Position {
        let loopDuration = animation.loopDuration
        let lastFrame = animation.frameCount - 1
        guard loopDuration > 0, lastFrame > 0 else {
            return Position(frameIndex: 0, loop: 0, isFinished: true, elapsed: elapsed, untilNextFrame: nil)
        }
        let completedLoops = Int(((elapsed + Self.tolerance) / loopDuration).rounded(.down))
        if case .times(let count) = animation.loopCount, completedLoops >= count {
            return Position(frameIndex: lastFrame, loop: count - 1, isFinished: true, elapsed: elapsed, untilNextFrame: nil)
        }
        let intoLoop = elapsed - Double(completedLoops) * loopDuration
        let index = frameIndex(at: intoLoop)
        let frameEnd = animation.frameStarts[index] + animation.frameDurations[index]
        return Position(
            frameIndex: index, loop: completedLoops, isFinished: false, elapsed: elapsed,
            untilNextFrame: max(0, frameEnd - intoLoop))
    }

    /// A nanosecond: times that differ by less fall on the same side of a frame boundary, so
    /// `10.1 - 10` (which is 0.0999…96 in floating point) starts the frame due at 0.1.
    private static let tolerance = 1e-9

    /// The frame showing `seconds` into one loop: the last frame starting at or before it.
    private func frameIndex(at seconds: Double) -> Int {
        let starts = animation.frameStarts
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= seconds + Self.tolerance { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
