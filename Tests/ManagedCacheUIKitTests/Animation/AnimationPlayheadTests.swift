import Foundation
import ManagedCacheLocking
import Testing

@testable import ManagedCacheUIKit

/// One view's playback decision, on a virtual clock: runs only in a window with
/// animation allowed and Reduce Motion off, first frame only otherwise, skips frames when behind.
@Suite struct AnimationPlayheadTests {
    /// Four frames of 100 ms, looping forever.
    private let animation = AnimationInfo(frameDurations: [0.1, 0.1, 0.1, 0.1], loopCount: .forever)
    private let onScreen = AnimationPlayhead.Conditions(isInWindow: true, reduceMotion: false, animationAllowed: true)

    @Test func playsAtEveryRefreshWhileOnScreen() {
        var playhead = AnimationPlayhead(animation: animation, conditions: onScreen, time: 0)
        #expect(playhead.wantsRefreshes)
        var shown: [Int] = []
        // A 60 Hz display for just under 0.5 s (frame 1 comes again at 0.5 s).
        for step in 1..<30 {
            let tick = playhead.tick(at: Double(step) / 60)
            if tick.changed { shown.append(tick.frameIndex) }
            #expect(tick.skippedFrames == 0)
        }
        #expect(shown == [1, 2, 3, 0])
    }

    @Test func aDisplayThatFallsBehindSkipsFramesAndKeepsTime() {
        var playhead = AnimationPlayhead(animation: animation, conditions: onScreen, time: 0)
        _ = playhead.tick(at: 0.05)
        // The next refresh comes 300 ms late: frames 1 and 2 are passed over, 3 shows on time.
        let late = playhead.tick(at: 0.35)
        #expect(late.frameIndex == 3)
        #expect(late.changed)
        #expect(late.skippedFrames == 2)
        // Time did not slow: 0.45 s after the start it is frame 0 of the next loop.
        #expect(playhead.tick(at: 0.45).frameIndex == 0)
        #expect(playhead.skippedFrames == 2)
    }

    @Test func offScreenItStopsAndComesBackWhereItWas() {
        var playhead = AnimationPlayhead(animation: animation, conditions: onScreen, time: 0)
        #expect(playhead.tick(at: 0.15).frameIndex == 1)
        var offScreen = onScreen
        offScreen.isInWindow = false
        let changed = playhead.update(offScreen, at: 0.15)
        #expect(!changed)  // keeps its frame
        #expect(!playhead.wantsRefreshes)
        #expect(playhead.tick(at: 10).frameIndex == 1)  // no time passes off-screen
        playhead.update(onScreen, at: 20)
        #expect(playhead.wantsRefreshes)
        #expect(playhead.tick(at: 20.04).frameIndex == 1)
        #expect(playhead.tick(at: 20.06).frameIndex == 2)
    }

    @Test func aViewNotYetInAWindowDoesNotPlay() {
        var playhead = AnimationPlayhead(animation: animation, conditions: AnimationPlayhead.Conditions(), time: 0)
        #expect(!playhead.wantsRefreshes)
        #expect(playhead.tick(at: 5).frameIndex == 0)
    }

    @Test func reduceMotionShowsTheFirstFrameOnly() {
        var playhead = AnimationPlayhead(animation: animation, conditions: onScreen, time: 0)
        #expect(playhead.tick(at: 0.25).frameIndex == 2)
        var reduced = onScreen
        reduced.reduceMotion = true
        let changed = playhead.update(reduced, at: 0.25)
        #expect(changed)  // back to the first frame
        #expect(playhead.frameIndex == 0)
        #expect(!playhead.wantsRefreshes)
        #expect(playhead.tick(at: 3).frameIndex == 0)
        // Reduce Motion off again: it plays from the first frame.
        playhead.update(onScreen, at: 4)
        #expect(playhead.tick(at: 4.15).frameIndex == 1)
    }

    @Test func animationTurnedOffByTheAppShowsTheFirstFrameOnly() {
        var disallowed = onScreen
        disallowed.animationAllowed = false
        var playhead = AnimationPlayhead(animation: animation, conditions: disallowed, time: 0)
        #expect(!playhead.wantsRefreshes)
        #expect(playhead.tick(at: 0.25).frameIndex == 0)
    }

    @Test func aFiniteAnimationStopsAskingForRefreshesAtTheEnd() {
        let once = AnimationInfo(frameDurations: [0.1, 0.1], loopCount: .times(1))
        var playhead = AnimationPlayhead(animation: once, conditions: onScreen, time: 0)
        #expect(playhead.tick(at: 0.15).frameIndex == 1)
        #expect(playhead.wantsRefreshes)
        #expect(playhead.tick(at: 0.2).frameIndex == 1)
        #expect(!playhead.wantsRefreshes)
    }

    @Test func theAppSettingAnnouncesItsChanges() {
        let posts = Lock(0)
        let observer = NotificationCenter.default.addObserver(
            forName: ImageAnimation.settingDidChangeNotification, object: nil, queue: nil
        ) { _ in posts.withLock { $0 += 1 } }
        defer { NotificationCenter.default.removeObserver(observer) }
        #expect(ImageAnimation.isEnabled)
        ImageAnimation.isEnabled = true  // unchanged: nothing posted
        ImageAnimation.isEnabled = false
        #expect(!ImageAnimation.isEnabled)
        ImageAnimation.isEnabled = true
        #expect(posts.withLock { $0 } == 2)
    }
}
