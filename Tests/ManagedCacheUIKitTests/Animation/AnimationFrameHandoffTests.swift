import Testing

@testable import ManagedCacheUIKit

/// Which animation frames are copied into bitmaps of their own before they leave the decode queue.
@Suite struct AnimationFrameHandoffTests {
    @Test(arguments: [
        (BitmapProvenance.drawn, true, AnimationFrameHandoff.handOver),
        (.drawn, false, .handOver),
        (.imageSource, true, .copyPixels),
        (.imageSource, false, .handOver),
        (.supplied, true, .copyPixels),
        (.supplied, false, .handOver),
    ])
    func framesFromASharedSourceAreCopiedUnlessDrawn(
        provenance: BitmapProvenance, sourceIsShared: Bool, expected: AnimationFrameHandoff
    ) {
        #expect(AnimationFrameHandoff.action(for: provenance, sourceIsShared: sourceIsShared) == expected)
    }

    @Test func noFrameOfASharedSourceIsHandedOverStillTiedToIt() {
        // Every way a frame can be made: only a bitmap the package drew itself goes out as it is.
        let handedOver = BitmapProvenance.allCases.filter {
            AnimationFrameHandoff.action(for: $0, sourceIsShared: true) == .handOver
        }
        #expect(handedOver == [.drawn])
    }

    /// A stand-in bitmap: an object holding pixels, as a `CGImage` is.
    private final class FakeBitmap: Sendable {}

    @Test func aBitmapOfUnknownOriginIsNotTrustedToOwnItsPixels() {
        // `DecodedImage(cgImage:)` (an app's placeholder or processor output) boxes as `.supplied`.
        #expect(BitmapBox(FakeBitmap()).provenance == .supplied)
        #expect(BitmapBox(FakeBitmap(), provenance: .drawn).provenance == .drawn)
    }
}
