/// One view's playback of an animated image: its `AnimationPlayhead` and the frame it shows from
/// the image's shared `AnimationFrameBuffer`. What the SwiftUI view and the AppKit view do on
/// every screen refresh, platform-neutral (generic over the frame type) and tested on Linux; the
/// shells only feed it refresh times and conditions and draw the frame it returns.
///
/// - The frame due is shown if the buffer holds it; if not, it is asked for (decoded off the
///   calling thread) and the frame on screen stays until a later refresh finds it there.
/// - The frame after the one shown is asked for ahead of time. Frame 0 is the image's own bitmap
///   and never comes from the buffer.
/// - The buffer is shared with every other view showing the image; each playback has its own
///   playhead, so two views of one GIF share frames and not their position.
struct AnimationPlayback<Frame: Sendable> {
    /// The buffer of the image's frames (shared).
    let buffer: AnimationFrameBuffer<Frame>
    /// The refresh rate the animation's frame durations need (`AnimationFrameRate`).
    let refreshRate: Int
    private let firstFrame: Frame
    private(set) var playhead: AnimationPlayhead
    /// The index of the frame on screen.
    private(set) var displayedIndex = 0
    /// The frame on screen.
    private(set) var displayed: Frame

    /// A playback of `animation` from its first frame (`firstFrame`, the image's bitmap), paused
    /// until `conditions` allow playing; the second frame is asked for at once.
    ///
    /// - Parameters:
    ///   - animation: Frame durations and loop count.
    ///   - buffer: The image's shared frame buffer.
    ///   - firstFrame: Frame 0.
    ///   - conditions: Where the view is and what the settings allow.
    ///   - time: Now, on the clock the refreshes use.
    init(
        animation: AnimationInfo, buffer: AnimationFrameBuffer<Frame>, firstFrame: Frame, conditions: AnimationPlayhead.Conditions,
        time: Double
    ) {
        self.buffer = buffer
        self.firstFrame = firstFrame
        displayed = firstFrame
        refreshRate = AnimationFrameRate.rate(for: animation)
        playhead = AnimationPlayhead(animation: animation, conditions: conditions, time: time)
        if buffer.frameCount > 1 { buffer.prefetch(1) }
    }

    /// Whether the view should ask for screen refreshes now.
    var wantsRefreshes: Bool { playhead.wantsRefreshes }

    /// New conditions at `time` (the view left or joined a window, a setting changed): the
    /// playhead pauses, resumes or goes back to the first frame.
    ///
    /// - Returns: The frame to show now.
    mutating func update(_ conditions: AnimationPlayhead.Conditions, at time: Double) -> Frame {
        guard conditions != playhead.conditions else { return displayed }
        playhead.update(conditions, at: time)
        return show(frame: playhead.frameIndex)
    }

    /// A screen refresh that reaches the screen at `time`.
    ///
    /// - Returns: The frame to show: the one due if it is decoded, else the one on screen.
    mutating func refresh(at time: Double) -> Frame {
        let tick = playhead.tick(at: time)
        return show(frame: tick.frameIndex)
    }

    private mutating func show(frame index: Int) -> Frame {
        guard index != displayedIndex else { return displayed }
        guard let frame = index == 0 ? firstFrame : buffer.frame(at: index) else { return displayed }
        displayed = frame
        displayedIndex = index
        let next = (index + 1) % buffer.frameCount
        if next != 0 { buffer.prefetch(next) }
        return frame
    }
}
