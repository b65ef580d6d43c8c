import Foundation
import ManagedCache
import Testing

@testable import ManagedCacheUIKit

/// What each built-in processor decides (identifiers, sizes, rectangles, clips, box
/// sizes, orientation transforms): the decisions the Apple drawing follows, tested here.
@Suite struct ProcessorGeometryTests {
    @Test func identifiersNameEveryParameterAndAChainJoinsThemInOrder() {
        #expect(ResizeImageProcessor(size: PixelSize(width: 64, height: 48)).identifier == "resize(64x48,aspectFill)")
        #expect(
            ResizeImageProcessor(size: PixelSize(width: 64, height: 48), scaleMode: .aspectFit, allowsUpscaling: true).identifier
                == "resize(64x48,aspectFit,upscale)")
        #expect(CropImageProcessor(size: PixelSize(width: 10, height: 20), anchor: .top).identifier == "crop(10x20,0.5,0.0)")
        #expect(CropImageProcessor(rect: PixelRect(x: 1, y: 2, width: 3, height: 4)).identifier == "crop(1,2,3x4)")
        #expect(RoundedCornersImageProcessor(radius: 12).identifier == "roundedCorners(12)")
        #expect(CircleImageProcessor().identifier == "circle")
        #expect(BlurImageProcessor(radius: 4).identifier == "blur(4.0)")

        let chain = ResizeImageProcessor(size: PixelSize(width: 8, height: 8)).then(CircleImageProcessor())
            .then(BlurImageProcessor(radius: 2))
        #expect(chain.identifier == "resize(8x8,aspectFill)>circle>blur(2.0)")
        #expect(chain.processors.count == 3, "a chain of chains is flattened")
        #expect(ComposedImageProcessor([chain, CircleImageProcessor()]).processors.count == 4)
    }

    @Test func resizingNeverUpscalesUnlessAskedAndFitsOrFills() {
        let source = PixelSize(width: 300, height: 200)
        let fill = ResizeImageProcessor(size: PixelSize(width: 100, height: 100))
        #expect(fill.plan(forSource: source).canvasSize == PixelSize(width: 100, height: 100))
        #expect(fill.plan(forSource: source).drawRect == PixelRect(x: -25, y: 0, width: 150, height: 100))
        let fit = ResizeImageProcessor(size: PixelSize(width: 100, height: 100), scaleMode: .aspectFit)
        #expect(fit.plan(forSource: source).canvasSize == PixelSize(width: 100, height: 67))
        let larger = ResizeImageProcessor(size: PixelSize(width: 600, height: 400))
        #expect(larger.plan(forSource: source).leavesUnchanged(source), "no upscaling by default")
        let upscaling = ResizeImageProcessor(size: PixelSize(width: 600, height: 400), allowsUpscaling: true)
        #expect(upscaling.plan(forSource: source).canvasSize == PixelSize(width: 600, height: 400))
        #expect(fill.decodeDimension(forSource: PixelSize(width: 3_000, height: 2_000)) == 150)
        #expect(larger.decodeDimension(forSource: source) == nil)
    }

    @Test func cropWindowsArePlacedByTheirAnchorAndStayInsideTheImage() {
        let source = PixelSize(width: 100, height: 60)
        #expect(
            CropImageProcessor(size: PixelSize(width: 40, height: 40)).cropRect(forSource: source)
                == PixelRect(x: 30, y: 10, width: 40, height: 40))
        #expect(
            CropImageProcessor(size: PixelSize(width: 40, height: 40), anchor: .top).cropRect(forSource: source)
                == PixelRect(x: 30, y: 0, width: 40, height: 40))
        #expect(
            CropImageProcessor(size: PixelSize(width: 40, height: 40), anchor: .right).cropRect(forSource: source)
                == PixelRect(x: 60, y: 10, width: 40, height: 40))
        #expect(
            CropImageProcessor(size: PixelSize(width: 500, height: 500)).cropRect(forSource: source)
                == PixelRect(x: 0, y: 0, width: 100, height: 60), "a window larger than the image is the image")
        #expect(
            CropImageProcessor(rect: PixelRect(x: 90, y: -10, width: 50, height: 30)).cropRect(forSource: source)
                == PixelRect(x: 90, y: 0, width: 10, height: 20), "a rectangle is clipped to the image")
        #expect(CropImageProcessor.Anchor(x: 2, y: -1) == CropImageProcessor.Anchor(x: 1, y: 0))
    }

    @Test func roundedCornersAreAtMostHalfTheShorterSideAndACircleIsTheCentredSquare() {
        let source = PixelSize(width: 100, height: 60)
        #expect(RoundedCornersImageProcessor(radius: 12).effectiveRadius(forSource: source) == 12)
        #expect(RoundedCornersImageProcessor(radius: 80).effectiveRadius(forSource: source) == 30)
        #expect(RoundedCornersImageProcessor(radius: -3).effectiveRadius(forSource: source) == 0)
        let circle = CircleImageProcessor().plan(forSource: source)
        #expect(circle.canvasSize == PixelSize(width: 60, height: 60))
        #expect(circle.drawRect == PixelRect(x: -20, y: 0, width: 100, height: 60))
        #expect(circle.clip == .ellipse)
        #expect(circle.makesTransparency)
        #expect(
            !RedrawPlan(canvasSize: source, drawRect: PixelRect(x: 0, y: 0, width: 100, height: 60), clip: .none)
                .makesTransparency)
        #expect(
            RedrawPlan(canvasSize: source, drawRect: PixelRect(x: 10, y: 0, width: 80, height: 60), clip: .none)
                .makesTransparency, "an image that does not cover the canvas leaves it transparent")
    }

    @Test func aBlurIsThreeOddBoxesSizedForItsRadius() {
        #expect(BlurImageProcessor.boxSize(forRadius: 0) == nil)
        #expect(BlurImageProcessor.boxSize(forRadius: -2) == nil)
        #expect(BlurImageProcessor.boxSize(forRadius: .nan) == nil)
        #expect(BlurImageProcessor.boxSize(forRadius: 0.5) == nil, "too small to change a pixel")
        #expect(BlurImageProcessor.boxSize(forRadius: 1) == 3)  // ⌊1 × 1.88 + 0.5⌋ = 2, made odd
        #expect(BlurImageProcessor.boxSize(forRadius: 8) == 15)  // ⌊8 × 1.88 + 0.5⌋ = 15
        for radius in stride(from: 1.0, through: 40, by: 0.5) {
            #expect((BlurImageProcessor.boxSize(forRadius: radius) ?? 1) % 2 == 1)
        }
    }

    /// Where each EXIF orientation's stored top-left and top-right pixels stand once upright:
    /// the 0th row and 0th column of the TIFF specification's table.
    @Test(arguments: [
        (ImageOrientation.up, "TL", "TR"), (.upMirrored, "TR", "TL"), (.down, "BR", "BL"), (.downMirrored, "BL", "BR"),
        (.leftMirrored, "TL", "BL"), (.right, "TR", "BR"), (.rightMirrored, "BR", "TR"), (.left, "BL", "TL"),
    ])
    func theUprightTransformPutsTheStoredCornersWhereTheOrientationSays(
        orientation: ImageOrientation, topLeft: String, topRight: String
    ) {
        let upright = PixelSize(width: 4, height: 3)
        let stored = orientation.swapsDimensions ? PixelSize(width: 3, height: 4) : upright
        let transform = UprightTransform(orientation, upright: upright)
        // Drawing space is y-up: a stored bitmap drawn at the origin has its top row at y = height.
        let corners: [String: (Double, Double)] = ["TL": (0, 3), "TR": (4, 3), "BL": (0, 0), "BR": (4, 0)]
        let mappedTopLeft = transform.apply(x: 0, y: Double(stored.height))
        let mappedTopRight = transform.apply(x: Double(stored.width), y: Double(stored.height))
        #expect(mappedTopLeft == corners[topLeft]!)
        #expect(mappedTopRight == corners[topRight]!)
    }
}
