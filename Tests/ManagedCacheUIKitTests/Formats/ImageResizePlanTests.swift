import ManagedCacheUIKit
import Testing

@Suite struct ImageResizePlanTests {
    private let landscape = PixelSize(width: 300, height: 200)
    private let square = PixelSize(width: 100, height: 100)

    @Test func aspectFillCoversTheTargetAndCropsAroundTheCentre() {
        let plan = ImageResizePlan(source: landscape, target: square, scaleMode: .aspectFill)
        #expect(plan.canvasSize == square)
        #expect(plan.drawRect == PixelRect(x: -25, y: 0, width: 150, height: 100))
    }

    @Test func aspectFitFitsInsideAndKeepsTheAspectRatio() {
        let plan = ImageResizePlan(source: landscape, target: square, scaleMode: .aspectFit)
        #expect(plan.canvasSize == PixelSize(width: 100, height: 67))
        #expect(plan.drawRect == PixelRect(x: 0, y: 0, width: 100, height: 67))
    }

    @Test func fillStretchesToExactlyTheTarget() {
        let plan = ImageResizePlan(source: landscape, target: square, scaleMode: .fill)
        #expect(plan.canvasSize == square)
        #expect(plan.drawRect == PixelRect(x: 0, y: 0, width: 100, height: 100))
    }

    @Test(arguments: ImageScaleMode.allCases)
    func withoutUpscalingASmallImageIsNeverEnlarged(_ mode: ImageScaleMode) {
        let small = PixelSize(width: 40, height: 30)
        let plan = ImageResizePlan(source: small, target: square, scaleMode: mode)
        #expect(plan.drawRect.width <= small.width && plan.drawRect.height <= small.height)
        #expect(plan.leavesUnchanged(small))
        #expect(plan.decodeDimension(forSource: small) == nil)
    }

    @Test func withUpscalingASmallImageIsEnlargedToTheTarget() {
        let small = PixelSize(width: 40, height: 20)
        let fill = ImageResizePlan(source: small, target: square, scaleMode: .aspectFill, allowsUpscaling: true)
        #expect(fill.canvasSize == square)
        #expect(fill.drawRect == PixelRect(x: -50, y: 0, width: 200, height: 100))
        let fit = ImageResizePlan(source: small, target: square, scaleMode: .aspectFit, allowsUpscaling: true)
        #expect(fit.canvasSize == PixelSize(width: 100, height: 50))
    }

    @Test func theDecodeDimensionJustCoversTheDrawnSize() {
        // 4000×3000 into 200×200 aspect-fill draws 267×200: the longer side needs 267 pixels.
        let photo = PixelSize(width: 4000, height: 3000)
        let plan = ImageResizePlan(source: photo, target: PixelSize(width: 200, height: 200), scaleMode: .aspectFill)
        #expect(plan.drawRect.width == 267 && plan.drawRect.height == 200)
        #expect(plan.decodeDimension(forSource: photo) == 267)
        // Stretching to 200×50 needs the full 200 across, so the longer side stays 200.
        let stretched = ImageResizePlan(source: photo, target: PixelSize(width: 200, height: 50), scaleMode: .fill)
        #expect(stretched.decodeDimension(forSource: photo) == 200)
    }

    @Test func aFormatWithoutASizeHasNoPlanAndAViewFormatIsNamedAfterItsSize() {
        #expect(ImageCacheFormat(name: "original").resizePlan(forSource: landscape) == nil)
        let format = ImageCacheFormat.viewFormat(pixelSize: PixelSize(width: 320, height: 240), scaleMode: .aspectFit)
        #expect(format.name == "view-320×240-aspectFit")
        #expect(format.variantIdentifier == "image/view-320×240-aspectFit")
        #expect(!format.allowsUpscaling)
    }
}
