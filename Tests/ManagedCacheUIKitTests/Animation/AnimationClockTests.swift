import ManagedCacheUIKit
import Testing

/// The playback clock on a virtual clock: times are plain numbers the test chooses.
@Suite struct AnimationClockTests {
    /// Frames of 100, 50 and 250 ms: 400 ms a loop.
    private let animation = AnimationInfo(frameDurations: [0.1, 0.05, 0.25], loopCount: .forever)

    @Test func theFrameAtATimeFollowsTheDurations() {
        let clock = AnimationClock(animation: animation, startTime: 10)
        let expected: [(Double, Int)] = [(10, 0), (10.099, 0), (10.1, 1), (10.149, 1), (10.15, 2), (10.399, 2), (10.4, 0)]
        for (time, frame) in expected {
            #expect(clock.position(at: time).frameIndex == frame, "at \(time)")
        }
        #expect(clock.position(at: 10.42).loop == 1)
        #expect(abs((clock.position(at: 10.12).untilNextFrame ?? 0) - 0.03) < 1e-9)
        // Before the start it shows the first frame.
        #expect(clock.position(at: 9).frameIndex == 0)
    }

    @Test func aLateQuestionSkipsFramesInsteadOfSlowingDown() {
        let clock = AnimationClock(animation: animation, startTime: 0)
        // The display stalls for 1.23 s: 3 whole loops (1.2 s) and 30 ms into the first frame.
        let position = clock.position(at: 1.23)
        #expect(position.loop == 3)
        #expect(position.frameIndex == 0)
        #expect(abs(position.elapsed - 1.23) < 1e-9)
    }

    @Test func pausedTimeDoesNotCount() {
        var clock = AnimationClock(animation: animation, startTime: 0)
        clock.pause(at: 0.12)  // in frame 1
        #expect(clock.isPaused)
        #expect(clock.position(at: 5).frameIndex == 1)
        clock.resume(at: 5)
        #expect(clock.position(at: 5).frameIndex == 1)
        #expect(clock.position(at: 5.03).frameIndex == 2)  // 0.15 s of playing time
        // Pausing twice or resuming a running clock changes nothing.
        clock.resume(at: 6)
        #expect(abs(clock.elapsed(at: 6) - 1.12) < 1e-9)
        clock.pause(at: 6)
        clock.pause(at: 7)
        #expect(abs(clock.elapsed(at: 9) - 1.12) < 1e-9)
    }

    @Test func aFiniteLoopCountStopsOnTheLastFrame() {
        let twice = AnimationInfo(frameDurations: [0.1, 0.05, 0.25], loopCount: .times(2))
        let clock = AnimationClock(animation: twice, startTime: 0)
        #expect(clock.position(at: 0.79).isFinished == false)
        #expect(clock.position(at: 0.79).loop == 1)
        let end = clock.position(at: 0.8)
        #expect(end.isFinished)
        #expect(end.frameIndex == 2)
        #expect(end.untilNextFrame == nil)
        #expect(clock.position(at: 100).frameIndex == 2)
        #expect(twice.totalDuration == 0.8)
    }

    @Test func rewindGoesBackToTheFirstFrame() {
        var clock = AnimationClock(animation: animation, startTime: 0)
        clock.rewind(at: 0.3)
        #expect(clock.position(at: 0.3).frameIndex == 0)
        #expect(clock.position(at: 0.41).frameIndex == 1)
    }

    @Test func aSingleFrameIsAlwaysFinished() {
        let still = AnimationInfo(frameDurations: [0.5], loopCount: .forever)
        let position = AnimationClock(animation: still, startTime: 0).position(at: 3)
        #expect(position.frameIndex == 0)
        #expect(position.isFinished)
    }
}
