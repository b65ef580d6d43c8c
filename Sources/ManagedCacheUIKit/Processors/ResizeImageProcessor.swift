/// Fits an image to a size: the processor apps reach for first (thumbnails, avatars, cells).
///
/// `.aspectFill` covers the size and crops the overflow around the centre, `.aspectFit` fits
/// inside it (the result may be smaller in one direction), `.fill` stretches to it. Never larger
/// than the source unless `allowsUpscaling` (upscaling costs memory and shows no more detail).
/// As the first processor of a variant it lets the decoder downsample while decoding.
///
/// ```swift
/// let fitted = ResizeImageProcessor(size: PixelSize(width: 320, height: 240), scaleMode: .aspectFit)
/// ```
public struct ResizeImageProcessor: ImageProcessor {
    /// The size to fit to, in pixels.
    public let size: PixelSize
    /// How the image is fitted. Default `.aspectFill`.
    public let scaleMode: ImageScaleMode
    /// Whether a smaller image is scaled up to `size`. Default `false`.
    public let allowsUpscaling: Bool

    /// Creates the processor; `scaleMode` defaults to `.aspectFill`, `allowsUpscaling` to `false`.
    ///
    /// - Parameters:
    ///   - size: The size to fit to, in pixels.
    ///   - scaleMode: How the image is fitted. Default ``ImageScaleMode/aspectFill``.
    ///   - allowsUpscaling: Whether a smaller image is scaled up to `size`. Default `false`.
    public init(size: PixelSize, scaleMode: ImageScaleMode = .aspectFill, allowsUpscaling: Bool = false) {
        self.size = size
        self.scaleMode = scaleMode
        self.allowsUpscaling = allowsUpscaling
    }

    /// "resize(64x64,aspectFill)", with ",upscale" when `allowsUpscaling`.
    public var identifier: String {
        "resize(\(size.width)x\(size.height),\(scaleMode.rawValue)\(allowsUpscaling ? ",upscale" : ""))"
    }

    /// How an image of `source` pixels is fitted.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: The plan: the canvas size and where the image is drawn on it.
    public func plan(forSource source: PixelSize) -> ImageResizePlan {
        ImageResizePlan(source: source, target: size, scaleMode: scaleMode, allowsUpscaling: allowsUpscaling)
    }

    /// The image fitted to `size`; the image itself when the plan leaves it unchanged.
    ///
    /// - Parameter image: The image so far (the decoded image, or the previous processor's result).
    /// - Returns: The fitted image.
    /// - Throws: `ImageDecodingError.processingFailed` when Core Graphics cannot draw the image
    ///   (Apple platforms); nothing elsewhere.
    public func process(_ image: DecodedImage) throws -> DecodedImage {
        let plan = plan(forSource: image.pixelSize)
        guard !plan.leavesUnchanged(image.pixelSize) else { return image }
        return try PixelCanvas.redraw(
            image, RedrawPlan(canvasSize: plan.canvasSize, drawRect: plan.drawRect, clip: .none), by: identifier)
    }

    /// The plan's `decodeDimension(forSource:)`: decoding needs only enough pixels to cover the result.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: The longer side to decode to, or `nil` for the full size.
    public func decodeDimension(forSource source: PixelSize) -> Int? {
        plan(forSource: source).decodeDimension(forSource: source)
    }
}
