import Dispatch
import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// The shared frame buffer with frames that are plain values: decoded on demand off
/// the asking thread, once however many views ask, within its byte limit.
@Suite struct AnimationFrameBufferTests {
    /// Records each decode, and can hold decodes back.
    private final class DecodeLog: Sendable {
        private let entries = Lock<[Int]>([])
        private let gate = Lock(true)
        var decoded: [Int] { entries.withLock { $0 } }
        func record(_ index: Int) { entries.withLock { $0.append(index) } }
        /// Holds decodes until `open()` (a slow decoder, without a timer).
        func close() { gate.withLock { $0 = false } }
        func open() { gate.withLock { $0 = true } }
        func waitForOpen() { waitUntilBlocking { gate.withLock { $0 } } }
    }

    /// A buffer of `frameCount` frames of 100 bytes each; frame `i` is the string "frame i".
    private func makeBuffer(frameCount: Int = 6, byteLimit: Int, log: DecodeLog) -> AnimationFrameBuffer<String> {
        AnimationFrameBuffer(frameCount: frameCount, byteLimit: byteLimit, queue: .global()) { index in
            log.waitForOpen()
            log.record(index)
            return AnimationFrameBuffer<String>.Decoded(frame: "frame \(index)", byteCount: 100)
        }
    }

    @Test func aMissStartsABackgroundDecodeAndTheNextAskGetsTheFrame() async {
        let log = DecodeLog()
        log.close()
        let buffer = makeBuffer(byteLimit: 1000, log: log)
        // The decode is held: asking returns at once (a decode on this thread would hang here).
        #expect(buffer.frame(at: 2) == nil)
        #expect(buffer.isDecoding)
        log.open()
        #expect(await waitUntil { buffer.frame(at: 2) != nil })
        #expect(buffer.frame(at: 2) == "frame 2")
        #expect(log.decoded == [2])
        #expect(buffer.frame(at: 7) == nil)  // out of range: nothing decoded
        #expect(buffer.decodeCount == 1)
    }

    @Test func viewsAskingForOneFrameShareOneDecode() async {
        let log = DecodeLog()
        log.close()
        let buffer = makeBuffer(byteLimit: 1000, log: log)
        // Three views (playheads) want frame 1 while its decode is held; one also prefetches it.
        for _ in 0..<3 { #expect(buffer.frame(at: 1) == nil) }
        buffer.prefetch(1)
        log.open()
        #expect(await waitUntil { buffer.heldFrames == [1] && !buffer.isDecoding })
        #expect(log.decoded == [1])
        // Each view then reads it from the buffer.
        for _ in 0..<3 { #expect(buffer.frame(at: 1) == "frame 1") }
        #expect(buffer.decodeCount == 1)
    }

    @Test func smallAnimationsAreDecodedOnceHoweverLongTheyLoop() async {
        let log = DecodeLog()
        let buffer = makeBuffer(frameCount: 4, byteLimit: 400, log: log)
        for _ in 0..<5 {
            for index in 0..<4 {
                _ = buffer.frame(at: index)
                #expect(await waitUntil { buffer.frame(at: index) != nil })
            }
        }
        #expect(log.decoded.sorted() == [0, 1, 2, 3])
        #expect(buffer.byteCount == 400)
    }

    @Test func theByteLimitHoldsAndTheFramesNeededLastGoFirst() async {
        let log = DecodeLog()
        // Room for three of six frames.
        let buffer = makeBuffer(frameCount: 6, byteLimit: 300, log: log)
        for index in 0..<6 {
            _ = buffer.frame(at: index)
            #expect(await waitUntil { buffer.frame(at: index) != nil })
            #expect(buffer.byteCount <= 300)
        }
        // Playing at frame 5: the next ones to play are 0 and 1, so the buffer dropped the frames
        // just shown (2 and 3), not those.
        #expect(buffer.heldFrames == [0, 1, 5], "held \(buffer.heldFrames.sorted())")
        #expect(buffer.byteCount == 300)
    }

    @Test func prefetchingTheNextFrameIsReadyBeforeItIsAsked() async {
        let log = DecodeLog()
        let buffer = makeBuffer(byteLimit: 1000, log: log)
        buffer.prefetch(3)
        buffer.prefetch(3)
        #expect(await waitUntil { buffer.heldFrames.contains(3) })
        #expect(buffer.frame(at: 3) == "frame 3")
        #expect(log.decoded == [3])
    }
}
