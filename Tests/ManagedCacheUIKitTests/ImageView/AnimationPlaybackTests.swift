import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// What the SwiftUI and AppKit views show on each refresh of an animated image, on a virtual
/// clock, with a real frame buffer whose decodes run on their own queue.
@Suite struct AnimationPlaybackTests {
    /// Four frames of 100 ms, looping forever.
    private let animation = AnimationInfo(frameDurations: [0.1, 0.1, 0.1, 0.1], loopCount: .forever)
    private let onScreen = AnimationPlayhead.Conditions(isInWindow: true, reduceMotion: false, animationAllowed: true)

    private func makeBuffer(frameCount: Int = 4) -> AnimationFrameBuffer<String> {
        AnimationFrameBuffer(frameCount: frameCount, byteLimit: 1_000, queue: DispatchQueue(label: "test.decode")) { index in
            .init(frame: "frame \(index)", byteCount: 10)
        }
    }

    @Test func showsFrameZeroAndAsksForTheSecondAtOnce() async {
        let buffer = makeBuffer()
        let playback = AnimationPlayback(animation: animation, buffer: buffer, firstFrame: "first", conditions: onScreen, time: 0)
        #expect(playback.displayed == "first")
        #expect(playback.wantsRefreshes)
        #expect(await waitUntil { buffer.heldFrames.contains(1) })
        #expect(!buffer.heldFrames.contains(0))  // frame 0 is the image's own bitmap
    }

    @Test func eachFrameShowsOnTimeOnceDecodedAndTheNextIsAskedForAhead() async {
        let buffer = makeBuffer()
        var playback = AnimationPlayback(animation: animation, buffer: buffer, firstFrame: "first", conditions: onScreen, time: 0)
        #expect(await waitUntil { buffer.heldFrames.contains(1) })
        #expect(playback.refresh(at: 0.15) == "frame 1")
        // Frame 2 was asked for ahead of time; once it is held it shows on time.
        #expect(await waitUntil { buffer.heldFrames.contains(2) })
        #expect(playback.refresh(at: 0.25) == "frame 2")
        // Frame 3 was prefetched too; a refresh that finds frame 0 due shows the first frame.
        #expect(playback.refresh(at: 0.45) == "first")
        #expect(playback.displayedIndex == 0)
    }

    @Test func aRefreshBeforeTheFrameIsDecodedShowsTheCurrentFrame() {
        // A buffer whose decodes never run (a suspended queue): every frame but 0 is missing.
        let queue = DispatchQueue(label: "test.suspended")
        queue.suspend()
        defer { queue.resume() }
        let buffer = AnimationFrameBuffer<String>(frameCount: 4, byteLimit: 1_000, queue: queue) { index in
            .init(frame: "frame \(index)", byteCount: 10)
        }
        var playback = AnimationPlayback(animation: animation, buffer: buffer, firstFrame: "first", conditions: onScreen, time: 0)
        #expect(playback.refresh(at: 0.15) == "first")
        #expect(playback.displayedIndex == 0)
    }

    @Test func reduceMotionOrAnimationOffShowsTheFirstFrameAndStopsRefreshing() async {
        let buffer = makeBuffer()
        var playback = AnimationPlayback(animation: animation, buffer: buffer, firstFrame: "first", conditions: onScreen, time: 0)
        #expect(await waitUntil { buffer.heldFrames.contains(1) })
        #expect(playback.refresh(at: 0.15) == "frame 1")
        var reduced = onScreen
        reduced.reduceMotion = true
        #expect(playback.update(reduced, at: 0.2) == "first")
        #expect(!playback.wantsRefreshes)
        var off = onScreen
        off.animationAllowed = false  // Animated Images off, or the app's switch
        #expect(playback.update(off, at: 0.3) == "first")
        #expect(!playback.wantsRefreshes)
        #expect(playback.update(onScreen, at: 0.4) == "first")
        #expect(playback.wantsRefreshes)
    }

    @Test func offScreenKeepsItsFrameAndStartsPaused() async {
        let buffer = makeBuffer()
        var hidden = onScreen
        hidden.isInWindow = false
        var playback = AnimationPlayback(animation: animation, buffer: buffer, firstFrame: "first", conditions: hidden, time: 0)
        #expect(!playback.wantsRefreshes)
        #expect(playback.update(onScreen, at: 5) == "first")
        #expect(await waitUntil { buffer.heldFrames.contains(1) })
        // The clock starts when the view is on screen: 0.15 s later it is frame 1.
        #expect(playback.refresh(at: 5.15) == "frame 1")
        #expect(playback.update(hidden, at: 5.2) == "frame 1")
        #expect(!playback.wantsRefreshes)
    }

    @Test func twoViewsShareTheBufferNotThePosition() async {
        let buffer = makeBuffer()
        var first = AnimationPlayback(animation: animation, buffer: buffer, firstFrame: "first", conditions: onScreen, time: 0)
        var second = AnimationPlayback(animation: animation, buffer: buffer, firstFrame: "first", conditions: onScreen, time: 0.1)
        #expect(await waitUntil { buffer.heldFrames.contains(1) })
        #expect(first.refresh(at: 0.15) == "frame 1")
        #expect(await waitUntil { buffer.heldFrames.contains(2) })
        #expect(first.refresh(at: 0.25) == "frame 2")
        #expect(second.refresh(at: 0.25) == "frame 1")
        #expect(await waitUntil { !buffer.isDecoding })
        #expect(buffer.decodeCount == buffer.heldFrames.count)  // each frame decoded once for both views
    }
}
