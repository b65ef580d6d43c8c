#if canImport(ImageIO)
import Accelerate
import CoreGraphics

/// The pixel work of the built-in processors on Apple platforms: Core Graphics draws (redraws,
/// crops, clips), vImage blurs. Every decision (sizes, rectangles, clip shapes, box sizes, the
/// orientation transform) is made by platform-neutral code tested on Linux; this only draws.
enum ProcessorDrawing {
    /// Draws the image as `plan` says into a new bitmap: transparent outside the clip shape and
    /// outside the drawn image, opaque when the source is and nothing makes transparency.
    static func redraw(_ image: DecodedImage, _ plan: RedrawPlan) -> DecodedImage? {
        guard let source = image.cgImage else { return nil }
        let layout = RedrawLayout(
            sourceHasAlpha: hasAlpha(source) || plan.makesTransparency, sourceIsRGB: source.colorSpace?.model == .rgb)
        guard let context = makeContext(plan.canvasSize, layout: layout, source: source) else { return nil }
        context.interpolationQuality = .high
        let bounds = CGRect(x: 0, y: 0, width: plan.canvasSize.width, height: plan.canvasSize.height)
        switch plan.clip {
        case .none:
            break
        case .roundedRect(let radius):
            // Core Graphics requires each corner to fit: at most half of either side.
            let corner = min(CGFloat(radius), bounds.width / 2, bounds.height / 2)
            context.addPath(CGPath(roundedRect: bounds, cornerWidth: corner, cornerHeight: corner, transform: nil))
            context.clip()
        case .ellipse:
            context.addEllipse(in: bounds)
            context.clip()
        }
        drawUpright(source, orientation: image.orientation, in: plan.drawRect, canvasHeight: plan.canvasSize.height, context: context)
        guard let drawn = context.makeImage() else { return nil }
        return DecodedImage(
            format: image.format, bitmap: PlatformBitmap(drawn), frameCount: image.frameCount,
            transformations: image.transformations)
    }

    /// Blurs the image with three box blurs `boxSize` pixels wide (vImage, edges extended), the
    /// same size, upright.
    static func blur(_ image: DecodedImage, boxSize: Int) -> DecodedImage? {
        guard let source = image.cgImage else { return nil }
        let size = image.pixelSize
        let layout = RedrawLayout(sourceHasAlpha: hasAlpha(source), sourceIsRGB: source.colorSpace?.model == .rgb)
        guard let context = makeContext(size, layout: layout, source: source), let pixels = context.data else { return nil }
        drawUpright(
            source, orientation: image.orientation, in: PixelRect(x: 0, y: 0, width: size.width, height: size.height),
            canvasHeight: size.height, context: context)
        let rowBytes = context.bytesPerRow
        let byteCount = rowBytes * size.height
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 16)
        defer { scratch.deallocate() }
        let height = vImagePixelCount(size.height)
        let width = vImagePixelCount(size.width)
        // The two buffer descriptions, in memory of their own (explicit pointers rather than `&`
        // conversions, which the Linux-hosted Apple surface check cannot compile).
        let canvas = UnsafeMutablePointer<vImage_Buffer>.allocate(capacity: 1)
        let spare = UnsafeMutablePointer<vImage_Buffer>.allocate(capacity: 1)
        canvas.initialize(to: vImage_Buffer(data: pixels, height: height, width: width, rowBytes: rowBytes))
        spare.initialize(to: vImage_Buffer(data: scratch, height: height, width: width, rowBytes: rowBytes))
        defer {
            canvas.deallocate()
            spare.deallocate()
        }
        func reading(_ buffer: UnsafeMutablePointer<vImage_Buffer>) -> UnsafePointer<vImage_Buffer> {
            UnsafeRawPointer(buffer).assumingMemoryBound(to: vImage_Buffer.self)  // bound by `initialize` above
        }
        // Three passes, each reading one buffer and writing the other: canvas → spare → canvas → spare.
        for pass in 0..<3 {
            let (from, to) = pass % 2 == 0 ? (canvas, spare) : (spare, canvas)
            let error = vImageBoxConvolve_ARGB8888(
                reading(from), reading(to), nil, 0, 0, UInt32(boxSize), UInt32(boxSize), nil, vImage_Flags(kvImageEdgeExtend))
            guard error == kvImageNoError else { return nil }
        }
        pixels.copyMemory(from: UnsafeRawPointer(scratch), byteCount: byteCount)
        guard let blurred = context.makeImage() else { return nil }
        return DecodedImage(
            format: image.format, bitmap: PlatformBitmap(blurred), frameCount: image.frameCount,
            transformations: image.transformations)
    }

    /// Draws `source`, stored with `orientation`, upright into `rect` (top-left measured) of a
    /// canvas `canvasHeight` pixels tall.
    private static func drawUpright(
        _ source: CGImage, orientation: ImageOrientation, in rect: PixelRect, canvasHeight: Int, context: CGContext
    ) {
        let upright = orientation.orientedSize(of: PixelSize(width: source.width, height: source.height))
        // The plan measures from the top left; Core Graphics from the bottom left.
        let flippedY = canvasHeight - rect.y - rect.height
        context.translateBy(x: CGFloat(rect.x), y: CGFloat(flippedY))
        context.scaleBy(
            x: CGFloat(rect.width) / CGFloat(max(1, upright.width)), y: CGFloat(rect.height) / CGFloat(max(1, upright.height)))
        let transform = UprightTransform(orientation, upright: upright)
        context.concatenate(
            CGAffineTransform(
                a: CGFloat(transform.a), b: CGFloat(transform.b), c: CGFloat(transform.c), d: CGFloat(transform.d),
                tx: CGFloat(transform.tx), ty: CGFloat(transform.ty)))
        context.draw(source, in: CGRect(x: 0, y: 0, width: source.width, height: source.height))
    }

    /// A bitmap context of `size` laid out as `layout` says, in the source's colour space when it
    /// keeps it and a context accepts it, else sRGB.
    private static func makeContext(_ size: PixelSize, layout: RedrawLayout, source: CGImage) -> CGContext? {
        let alpha: CGImageAlphaInfo = layout.hasAlpha ? .premultipliedLast : .noneSkipLast
        func context(in space: CGColorSpace?) -> CGContext? {
            guard let space else { return nil }
            return CGContext(
                data: nil, width: max(1, size.width), height: max(1, size.height), bitsPerComponent: 8, bytesPerRow: 0,
                space: space, bitmapInfo: alpha.rawValue)
        }
        return (layout.keepsColorSpace ? context(in: source.colorSpace) : nil) ?? context(in: CGColorSpace(name: CGColorSpace.sRGB))
    }

    private static func hasAlpha(_ image: CGImage) -> Bool {
        switch image.alphaInfo {
        case .none, .noneSkipFirst, .noneSkipLast: false
        default: true
        }
    }
}
#endif
