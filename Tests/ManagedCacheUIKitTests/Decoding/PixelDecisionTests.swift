import Foundation
import Testing

@testable import ManagedCacheUIKit

/// The platform-neutral decisions the Apple pixel code follows: which container a variant is
/// stored in, which bitmap format a redraw draws into, and when two images are the same.
@Suite struct PixelDecisionTests {
    // MARK: Stored container

    @Test func aJPEGIsOpaqueWhateverAlphaLayoutItsDecodedBitmapReports() {
        // ImageIO documents no alpha layout for its thumbnails: a JPEG's pixels are opaque even
        // if its bitmap were laid out with an alpha channel, so its variants are stored as JPEG.
        #expect(PixelOpacity.isOpaque(format: .jpeg, layoutHasAlpha: true))
        #expect(PixelOpacity.isOpaque(format: .png, layoutHasAlpha: false))
        #expect(!PixelOpacity.isOpaque(format: .png, layoutHasAlpha: true))
        #expect(!PixelOpacity.isOpaque(format: nil, layoutHasAlpha: true))
    }

    @Test func opaqueVariantsAreStoredAsJPEGAndTransparentOnesAsPNG() throws {
        let jpeg = try RealImageFixture.named("baseline.jpg")
        let png = try RealImageFixture.named("rgba.png")
        func container(_ data: Data, _ processors: [any ImageProcessor]) throws -> StoredImageEncoding.Container {
            StoredImageEncoding(for: try ImageDecoder(processors: processors).decodeImage(data)).container
        }
        let resize = ResizeImageProcessor(size: PixelSize(width: 16, height: 16))
        #expect(try container(jpeg, []) == .jpeg)
        #expect(try container(jpeg, [resize]) == .jpeg, "a resize covering its canvas keeps a photo opaque")
        #expect(try container(jpeg, [CropImageProcessor(size: PixelSize(width: 8, height: 8))]) == .jpeg)
        #expect(try container(jpeg, [resize, CircleImageProcessor()]) == .png, "a circle makes transparent corners")
        #expect(try container(jpeg, [RoundedCornersImageProcessor(radius: 4)]) == .png)
        #expect(try container(jpeg, [BlurImageProcessor(radius: 4)]) == .jpeg)
        #expect(try container(png, [resize]) == .png)
        // A redraw of opaque pixels stays opaque unless the plan leaves part of the canvas bare.
        let covering = RedrawPlan(
            canvasSize: PixelSize(width: 4, height: 4), drawRect: PixelRect(x: -2, y: 0, width: 8, height: 4), clip: .none)
        let letterboxed = RedrawPlan(
            canvasSize: PixelSize(width: 4, height: 4), drawRect: PixelRect(x: 0, y: 1, width: 4, height: 2), clip: .none)
        #expect(PixelOpacity.isOpaque(redrawing: true, covering))
        #expect(!PixelOpacity.isOpaque(redrawing: true, letterboxed))
        #expect(!PixelOpacity.isOpaque(redrawing: false, covering))
    }

    // MARK: Precision

    @Test func aRedrawKeepsTheSourcesPrecisionAndFallsBackTo8BitSRGBLast() {
        typealias Attempt = RedrawLayout.Attempt
        let photo = RedrawLayout(sourceHasAlpha: false, sourceIsRGB: true)
        #expect(photo.components == .uint8)
        #expect(photo.attempts == [Attempt(components: .uint8, colorSpace: .source), Attempt(components: .uint8, colorSpace: .sRGB)])

        let deep = RedrawLayout(sourceHasAlpha: true, sourceIsRGB: true, sourceBitsPerComponent: 16)
        #expect(deep.components == .uint16 && deep.components.bitsPerComponent == 16 && !deep.components.isFloat)
        #expect(
            deep.attempts == [
                Attempt(components: .uint16, colorSpace: .source), Attempt(components: .uint16, colorSpace: .sRGB),
                Attempt(components: .uint8, colorSpace: .sRGB),
            ])

        // An extended-range image (16-bit floats, extended sRGB, as an extended-range renderer
        // draws): half floats in its own space, then 32-bit floats, never clipped to 8-bit sRGB
        // unless Core Graphics accepts nothing else.
        let extended = RedrawLayout(sourceHasAlpha: true, sourceIsRGB: true, sourceBitsPerComponent: 16, sourceHasFloatComponents: true)
        #expect(extended.components == .float16 && extended.components.isFloat)
        #expect(
            extended.attempts == [
                Attempt(components: .float16, colorSpace: .source), Attempt(components: .float16, colorSpace: .extendedSRGB),
                Attempt(components: .float32, colorSpace: .source), Attempt(components: .float32, colorSpace: .extendedSRGB),
                Attempt(components: .uint8, colorSpace: .sRGB),
            ])

        let float32 = RedrawLayout(sourceHasAlpha: false, sourceIsRGB: true, sourceBitsPerComponent: 32, sourceHasFloatComponents: true)
        #expect(float32.components == .float32 && float32.components.bitsPerComponent == 32)
        #expect(float32.attempts.first == Attempt(components: .float32, colorSpace: .source))

        // Grey and CMYK sources are drawn into sRGB (extended sRGB for floats), at their precision.
        let grey16 = RedrawLayout(sourceHasAlpha: false, sourceIsRGB: false, sourceBitsPerComponent: 16)
        #expect(!grey16.keepsColorSpace)
        #expect(grey16.attempts == [Attempt(components: .uint16, colorSpace: .sRGB), Attempt(components: .uint8, colorSpace: .sRGB)])
        let greyFloat = RedrawLayout(sourceHasAlpha: false, sourceIsRGB: false, sourceBitsPerComponent: 32, sourceHasFloatComponents: true)
        #expect(
            greyFloat.attempts == [
                Attempt(components: .float32, colorSpace: .extendedSRGB), Attempt(components: .uint8, colorSpace: .sRGB),
            ])

        // 10- and 12-bit sources get 16 bits, never 8.
        #expect(RedrawLayout(sourceHasAlpha: false, sourceIsRGB: true, sourceBitsPerComponent: 10).components == .uint16)
        for layout in [photo, deep, extended, float32, grey16, greyFloat] {
            #expect(layout.attempts.last == Attempt(components: .uint8, colorSpace: .sRGB))
        }
    }

    // MARK: Comparing images

    /// A stand-in bitmap: an object holding pixels, as a `CGImage` is.
    private final class FakeBitmap: Sendable {
        let pixels: [UInt8]
        init(_ pixels: [UInt8]) { self.pixels = pixels }
    }

    @Test func bitmapsCompareByIdentityNeverByPixels() {
        let bytes: [UInt8] = [1, 2, 3, 4]
        // Two decodes of the same bytes: two bitmaps with equal pixels.
        let first = BitmapBox(FakeBitmap(bytes))
        let second = BitmapBox(FakeBitmap(bytes))
        #expect(first.pixels.pixels == second.pixels.pixels)
        #expect(first != second, "a later decode is another image: views take it and free the earlier bitmap")
        // Copies of one decoded image (what the caches share with every user) are equal.
        let copy = first
        #expect(copy == first)
        // So are two boxes of one bitmap object (an app storing the same `UIImage` twice).
        #expect(BitmapBox(first.pixels) == first)
    }

    @Test func onLinuxImagesHoldingEqualBytesAreEqual() throws {
        // No bitmap exists on Linux: an image is its validated bytes, and equal bytes are equal
        // images (the Apple rule above applies wherever a bitmap is decoded).
        let data = try RealImageFixture.named("baseline.jpg")
        #expect(try ImageDecoder().decodeImage(data) == ImageDecoder().decodeImage(data))
    }
}
