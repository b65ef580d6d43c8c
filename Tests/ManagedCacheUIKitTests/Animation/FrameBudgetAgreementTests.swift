import Dispatch
import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// An animation's frame budget and what its frame buffer charges count the same bytes
/// (`BitmapFootprint`: bytes per row × rows), so "keep every frame" holds with row padding and
/// 16-bit frames; and a prefetched next frame is kept even when the buffer has room for one frame.
@Suite struct FrameBudgetAgreementTests {
    /// A frame as a platform lays it out: `bytesPerRow` (padding included) × `rows`.
    private struct Frame: Sendable, Equatable {
        var index: Int
        var bytesPerRow: Int
        var rows: Int
    }

    /// A buffer of `frameCount` frames laid out as `frame`, charged with `BitmapFootprint` as
    /// `AnimatedFrames` charges a `CGImage`; every decode is counted.
    private func makeBuffer(frameCount: Int, byteLimit: Int, bytesPerRow: Int, rows: Int, decodes: Lock<[Int]>)
        -> AnimationFrameBuffer<Frame>
    {
        AnimationFrameBuffer(frameCount: frameCount, byteLimit: byteLimit, queue: .global()) { index in
            decodes.withLock { $0.append(index) }
            let frame = Frame(index: index, bytesPerRow: bytesPerRow, rows: rows)
            return .init(frame: frame, byteCount: BitmapFootprint.byteCount(bytesPerRow: frame.bytesPerRow, rows: frame.rows))
        }
    }

    @Test func theFootprintIsRowBytesTimesRowsAndSaturates() {
        #expect(BitmapFootprint.byteCount(bytesPerRow: 288, rows: 20) == 5760)
        #expect(BitmapFootprint.byteCount(bytesPerRow: 0, rows: 20) == 0)
        #expect(BitmapFootprint.byteCount(bytesPerRow: Int.max / 2, rows: 3) == Int.max)
        #expect(BitmapFootprint.rgba8BytesPerRow(width: 24) == 96)
        // Where there is no bitmap (Linux), an image counts as unpadded 8-bit RGBA.
        let image = DecodedImage(info: ImageInfo(format: .png, pixelWidth: 24, pixelHeight: 16), encodedData: nil)
        #expect(image.decodedByteCount == BitmapFootprint.byteCount(bytesPerRow: 96, rows: 16))
    }

    @Test func paddedSixteenBitFramesThatFitAreAllKeptAndDecodedOnce() async {
        // 33 pixels wide, 16-bit RGBA (8 bytes a pixel = 264), rows padded to 288 bytes; 20 rows.
        // Counted as width × height × 4 these frames would take 2 640 bytes, less than half what
        // they occupy: a budget made so would hold fewer frames than it promised.
        let (bytesPerRow, rows, frameCount) = (288, 20, 6)
        let frameBytes = BitmapFootprint.byteCount(bytesPerRow: bytesPerRow, rows: rows)
        #expect(frameBytes == 5760)
        let limit = AnimationFrameBudget.byteLimit(frameByteCount: frameBytes, frameCount: frameCount, limit: 1 << 20)
        #expect(limit == (frameCount - 1) * frameBytes, "every frame but the first fits")

        let decodes = Lock<[Int]>([])
        let buffer = makeBuffer(frameCount: frameCount, byteLimit: limit, bytesPerRow: bytesPerRow, rows: rows, decodes: decodes)
        // Three loops, as a view plays them: frame 0 is the image's own bitmap.
        for _ in 0..<3 {
            for index in 1..<frameCount {
                _ = buffer.frame(at: index)
                #expect(await waitUntil { buffer.frame(at: index) != nil })
            }
        }
        #expect(buffer.heldFrames == Set(1..<frameCount))
        #expect(buffer.byteCount == limit)
        #expect(decodes.withLock { $0.sorted() } == Array(1..<frameCount), "each frame decoded once, however long it loops")
    }

    @Test func aPrefetchedFrameIsKeptWhenTheBufferHoldsOneFrame() async {
        // Room for one frame: the frame on screen and the next cannot both be kept. The next one
        // is kept (the view already shows the current one), so it is ready when it is due.
        let decodes = Lock<[Int]>([])
        let buffer = makeBuffer(frameCount: 5, byteLimit: 100, bytesPerRow: 10, rows: 10, decodes: decodes)
        _ = buffer.frame(at: 1)
        #expect(await waitUntil { buffer.frame(at: 1) != nil })  // shown
        for next in [2, 3, 4] {
            buffer.prefetch(next)
            #expect(await waitUntil { !buffer.isDecoding })
            #expect(buffer.heldFrames == [next], "the prefetched frame \(next) is kept")
            #expect(buffer.frame(at: next)?.index == next, "shown on time, without a decode on demand")
        }
        #expect(decodes.withLock { $0 } == [1, 2, 3, 4])
    }

    @Test func aTwoFrameBudgetPlaysEveryPrefetchedFrameOnTime() async {
        // The smallest budget (two frames) for an animation too large to keep: each frame is
        // prefetched while the one before shows, and is held when it is due, loop after loop.
        let (bytesPerRow, rows, frameCount) = (288, 20, 6)
        let frameBytes = BitmapFootprint.byteCount(bytesPerRow: bytesPerRow, rows: rows)
        let limit = AnimationFrameBudget.byteLimit(frameByteCount: frameBytes, frameCount: frameCount, limit: 0)
        #expect(limit == 2 * frameBytes)
        let decodes = Lock<[Int]>([])
        let buffer = makeBuffer(frameCount: frameCount, byteLimit: limit, bytesPerRow: bytesPerRow, rows: rows, decodes: decodes)
        buffer.prefetch(1)  // as a view does when it starts playing frame 0
        for _ in 0..<3 {
            for index in 1..<frameCount {
                #expect(await waitUntil { !buffer.isDecoding })
                #expect(buffer.frame(at: index)?.index == index, "frame \(index) was prefetched and kept")
                let next = (index + 1) % frameCount
                if next != 0 { buffer.prefetch(next) } else { buffer.prefetch(1) }
                #expect(buffer.byteCount <= limit)
            }
        }
        // At most one decode per frame shown (a frame still held from the loop before is not
        // decoded again), and none on demand: every frame above was held when it was asked for.
        #expect(decodes.withLock { $0.count } <= 3 * (frameCount - 1))
    }
}
