/// One view's playback of an animation: its own `AnimationClock`, whether it may run now, and
/// which frame it shows. The decision behind `ManagedImageView`'s animation, on every platform;
/// the UIKit shell only feeds it screen refreshes and shows the frame it names.
///
/// Rules:
/// - It runs only while the view is in a window, animation is allowed (the app's
///   `ImageAnimation.isEnabled`, the view's `animatesImages`) and Reduce Motion is off; otherwise the
///   clock is paused and no refreshes are wanted.
/// - Under Reduce Motion or with animation turned off it shows the first frame; off-screen it keeps
///   the frame it had and carries on from there when it comes back.
/// - A refresh that comes late skips the frames it missed (counted in `skippedFrames`).
struct AnimationPlayhead: Sendable {
    /// What the playhead depends on outside itself.
    struct Conditions: Sendable, Hashable {
        /// The view is in a window (on screen, or about to be).
        var isInWindow = false
        /// The system's Reduce Motion setting.
        var reduceMotion = false
        /// The app allows animated images (`ImageAnimation.isEnabled` and the view's `animatesImages`).
        var animationAllowed = true

        /// Whether the animation may play under these conditions.
        var allowsPlaying: Bool { isInWindow && animationAllowed && !reduceMotion }
        /// Whether only the first frame may show.
        var showsFirstFrameOnly: Bool { reduceMotion || !animationAllowed }
    }

    /// What a refresh decided.
    struct Tick: Sendable, Hashable {
        /// The frame to show now.
        var frameIndex: Int
        /// Whether it differs from the frame shown before this refresh.
        var changed: Bool
        /// Frames passed over since the previous refresh (the display fell behind).
        var skippedFrames: Int
    }

    private(set) var clock: AnimationClock
    private(set) var conditions: Conditions
    /// The frame shown now.
    private(set) var frameIndex = 0
    /// Frames skipped because refreshes came late, since the start.
    private(set) var skippedFrames = 0
    /// Playing time at the last refresh, to count skipped frames.
    private var lastElapsed = 0.0

    /// A playhead for `animation` at its first frame, paused until the conditions allow playing.
    init(animation: AnimationInfo, conditions: Conditions, time: Double) {
        var clock = AnimationClock(animation: animation, startTime: time)
        if !conditions.allowsPlaying { clock.pause(at: time) }
        self.clock = clock
        self.conditions = conditions
    }

    /// Whether the view should ask for screen refreshes (a display link running): playing and not
    /// finished.
    var wantsRefreshes: Bool {
        conditions.allowsPlaying && !clock.position(elapsed: lastElapsed).isFinished
    }

    /// Applies new conditions at `time`: pauses or resumes the clock, and goes back to the first
    /// frame when only that may show. Returns whether the frame shown changed.
    @discardableResult
    mutating func update(_ newConditions: Conditions, at time: Double) -> Bool {
        conditions = newConditions
        if newConditions.allowsPlaying {
            clock.resume(at: time)
        } else {
            clock.pause(at: time)
        }
        guard newConditions.showsFirstFrameOnly else { return false }
        clock.rewind(at: time)
        lastElapsed = 0
        let changed = frameIndex != 0
        frameIndex = 0
        return changed
    }

    /// A screen refresh at `time`: the frame to show, and how many were skipped to get there.
    mutating func tick(at time: Double) -> Tick {
        let elapsed = clock.elapsed(at: time)
        let position = clock.position(elapsed: elapsed)
        let skipped = framesPassed(from: lastElapsed, to: elapsed)
        lastElapsed = elapsed
        skippedFrames += skipped
        let changed = position.frameIndex != frameIndex
        frameIndex = position.frameIndex
        return Tick(frameIndex: frameIndex, changed: changed, skippedFrames: skipped)
    }

    /// How many frames started and ended between two refreshes, unseen.
    private func framesPassed(from start: Double, to end: Double) -> Int {
        guard end > start else { return 0 }
        let first = clock.position(elapsed: start)
        let last = clock.position(elapsed: end)
        let frameCount = clock.animation.frameCount
        let steps = (last.loop - first.loop) * frameCount + (last.frameIndex - first.frameIndex)
        return max(0, steps - 1)
    }
}
