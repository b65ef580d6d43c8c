/// Cuts the largest centred circle out of an image (avatars): the result is a square of the
/// shorter side, transparent outside the circle.
///
/// ```swift
/// let avatar = ImageCacheFormat(name: "avatar", size: PixelSize(width: 96, height: 96), processors: [CircleImageProcessor()])
/// ```
public struct CircleImageProcessor: ImageProcessor {
    /// Creates the processor.
    public init() {}

    /// "circle".
    public var identifier: String { "circle" }

    /// The square an image of `source` pixels is cut to, and where the image is drawn in it.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: A square canvas of the shorter side, the image centred on it, clipped to an ellipse.
    public func plan(forSource source: PixelSize) -> RedrawPlan {
        let side = max(1, min(source.width, source.height))
        return RedrawPlan(
            canvasSize: PixelSize(width: side, height: side),
            drawRect: PixelRect(x: (side - source.width) / 2, y: (side - source.height) / 2, width: source.width, height: source.height),
            clip: .ellipse)
    }

    /// The image cut to a circle.
    ///
    /// - Parameter image: The image so far (the decoded image, or the previous processor's result).
    /// - Returns: A square image, transparent outside the circle.
    /// - Throws: `ImageDecodingError.processingFailed` when Core Graphics cannot draw the image
    ///   (Apple platforms); nothing elsewhere.
    public func process(_ image: DecodedImage) throws -> DecodedImage {
        try PixelCanvas.redraw(image, plan(forSource: image.pixelSize), by: identifier)
    }
}
