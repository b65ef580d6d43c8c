import ManagedCacheUIKit
import Testing

/// The view-size decision behind `ManagedImageView`'s and `ManagedImage`'s default
/// formats.
@Suite struct LayoutSizingTests {
    let sizing = LayoutSizing()

    @Test func nothingIsDecidedBeforeLayoutOrWithoutAScale() {
        #expect(sizing.pixelSize(width: 0, height: 0, scale: 3) == nil)  // not laid out
        #expect(sizing.pixelSize(width: 100, height: 0, scale: 3) == nil)
        #expect(sizing.pixelSize(width: 100, height: 80, scale: 0) == nil)  // not on a screen yet
        #expect(sizing.pixelSize(width: .nan, height: 80, scale: 2) == nil)
        #expect(sizing.pixelSize(width: 100, height: 80, scale: 3) == PixelSize(width: 300, height: 240))
        #expect(sizing.pixelSize(width: 33.4, height: 10, scale: 3) == PixelSize(width: 101, height: 30))
    }

    @Test func aNewVariantOnlyWhenTheSizeChangesEnough() {
        let current = PixelSize(width: 200, height: 200)
        #expect(sizing.needsNewVariant(current: nil, new: current))
        #expect(!sizing.needsNewVariant(current: current, new: current))
        #expect(sizing.needsNewVariant(current: current, new: PixelSize(width: 201, height: 200)))  // blurry otherwise
        #expect(!sizing.needsNewVariant(current: current, new: PixelSize(width: 180, height: 180)))  // jitter
        #expect(sizing.needsNewVariant(current: current, new: PixelSize(width: 140, height: 200)))  // a quarter smaller
    }

    @Test func aViewFormatNeverUpscalesBeyondTheSource() throws {
        let format = sizing.format(for: PixelSize(width: 600, height: 600), scaleMode: .aspectFit)
        #expect(format.name == "view-600×600-aspectFit")
        #expect(!format.allowsUpscaling)
        let plan = try #require(format.resizePlan(forSource: PixelSize(width: 120, height: 90)))
        #expect(plan.canvasSize.width <= 120 && plan.canvasSize.height <= 90)
        #expect(ImageCacheFormat.viewFormat(pixelSize: PixelSize(width: 600, height: 600), scaleMode: .aspectFit).allowsUpscaling == false)
    }
}
