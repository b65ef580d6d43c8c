#if canImport(ImageIO)
import Accelerate
import CoreGraphics

/// The pixel work of the built-in processors on Apple platforms: Core Graphics draws (redraws,
/// crops, clips), vImage blurs. Every decision (sizes, rectangles, clip shapes, box sizes, the
/// orientation transform) is made by platform-neutral code tested on Linux; this only draws.
enum ProcessorDrawing {
    /// Draws the image as `plan` says into a new bitmap: upright, transparent outside the clip
    /// shape and outside the drawn image, opaque when the source is and nothing makes
    /// transparency, with the source's precision and colour space (``RedrawLayout``). A format's
    /// resize (`ImageIODecoding.resize`) and the upright copy drawn before encoding come here too.
    static func redraw(_ image: DecodedImage, _ plan: RedrawPlan) -> DecodedImage? {
        guard let source = image.cgImage else { return nil }
        let isOpaque = PixelOpacity.isOpaque(redrawing: image.isOpaque, plan)
        let layout = RedrawLayout(
            sourceHasAlpha: !isOpaque, sourceIsRGB: source.colorSpace?.model == .rgb,
            sourceBitsPerComponent: source.bitsPerComponent, sourceHasFloatComponents: source.hasFloatComponents)
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
            format: image.format, bitmap: PlatformBitmap(drawn, provenance: .drawn), frameCount: image.frameCount,
            transformations: image.transformations, isOpaque: isOpaque)
    }

    /// Blurs the image with three box blurs `boxSize` pixels wide (vImage, edges extended), the
    /// same size, upright. In 8 bits a component whatever the source: vImage's ARGB8888 box
    /// convolution reads and writes 8-bit pixels.
    static func blur(_ image: DecodedImage, boxSize: Int) -> DecodedImage? {
        guard let source = image.cgImage else { return nil }
        let size = image.pixelSize
        let layout = RedrawLayout(sourceHasAlpha: !image.isOpaque, sourceIsRGB: source.colorSpace?.model == .rgb)
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
            format: image.format, bitmap: PlatformBitmap(blurred, provenance: .drawn), frameCount: image.frameCount,
            transformations: image.transformations, isOpaque: image.isOpaque)
    }

    /// Draws `source`, stored with `orientation`, upright into `rect` (top-left measured) of a
    /// canvas `canvasHeight` pixels tall, as `UprightTransform.placing` (tested on Linux) says.
    private static func drawUpright(
        _ source: CGImage, orientation: ImageOrientation, in rect: PixelRect, canvasHeight: Int, context: CGContext
    ) {
        let stored = PixelSize(width: source.width, height: source.height)
        let placing = UprightTransform.placing(orientation, stored: stored, in: rect, canvasHeight: canvasHeight)
        context.concatenate(
            CGAffineTransform(
                a: CGFloat(placing.a), b: CGFloat(placing.b), c: CGFloat(placing.c), d: CGFloat(placing.d),
                tx: CGFloat(placing.tx), ty: CGFloat(placing.ty)))
        context.draw(source, in: CGRect(x: 0, y: 0, width: source.width, height: source.height))
    }

    /// A bitmap context of `size` laid out as `layout` says: the first of its `attempts` Core
    /// Graphics accepts (`CGContext.init` returns `nil` for a combination it does not support).
    private static func makeContext(_ size: PixelSize, layout: RedrawLayout, source: CGImage) -> CGContext? {
        for attempt in layout.attempts {
            let space: CGColorSpace?
            switch attempt.colorSpace {
            case .source: space = source.colorSpace
            case .sRGB: space = CGColorSpace(name: CGColorSpace.sRGB)
            case .extendedSRGB: space = CGColorSpace(name: CGColorSpace.extendedSRGB)
            }
            guard let space else { continue }
            let context = CGContext(
                data: nil, width: max(1, size.width), height: max(1, size.height),
                bitsPerComponent: attempt.components.bitsPerComponent, bytesPerRow: 0, space: space,
                bitmapInfo: bitmapInfo(attempt.components, hasAlpha: layout.hasAlpha))
            if let context { return context }
        }
        return nil
    }

    /// The bitmap info of a context with `components`: premultiplied alpha last or a skipped
    /// last byte, as the pixel formats Core Graphics supports for RGB contexts are (8 and 16-bit
    /// integers and 32-bit floats in the default byte order; half floats, which Core Graphics
    /// reads in the host's 16-bit order, little-endian on every Apple device).
    private static func bitmapInfo(_ components: RedrawLayout.Components, hasAlpha: Bool) -> UInt32 {
        let alpha: CGImageAlphaInfo = hasAlpha ? .premultipliedLast : .noneSkipLast
        switch components {
        case .uint8, .uint16: return alpha.rawValue
        case .float16: return alpha.rawValue | CGBitmapInfo.floatComponents.rawValue | CGBitmapInfo.byteOrder16Little.rawValue
        case .float32: return alpha.rawValue | CGBitmapInfo.floatComponents.rawValue
        }
    }
}
#endif
