/// Rounds an image's corners: the pixels outside the rounded rectangle become transparent (so a
/// variant with rounded corners is stored as PNG).
///
/// ```swift
/// let card = ImageCacheFormat(name: "card", processors: [RoundedCornersImageProcessor(radius: 24)])
/// ```
public struct RoundedCornersImageProcessor: ImageProcessor {
    /// The corners' radius in pixels, at most half the shorter side (larger values are reduced to it).
    public let radius: Int

    /// Rounds corners with `radius` pixels.
    ///
    /// - Parameter radius: The corners' radius in pixels; reduced to half the shorter side.
    public init(radius: Int) {
        self.radius = radius
    }

    /// "roundedCorners(24)".
    public var identifier: String { "roundedCorners(\(radius))" }

    /// The radius used for an image of `source` pixels: at most half its shorter side, at least 0.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: The radius in pixels.
    public func effectiveRadius(forSource source: PixelSize) -> Int {
        min(max(0, radius), max(0, min(source.width, source.height) / 2))
    }

    /// The image with rounded corners; the image itself for a radius of 0.
    ///
    /// - Parameter image: The image so far (the decoded image, or the previous processor's result).
    /// - Returns: The image, transparent outside its rounded rectangle.
    /// - Throws: `ImageDecodingError.processingFailed` when Core Graphics cannot draw the image
    ///   (Apple platforms); nothing elsewhere.
    public func process(_ image: DecodedImage) throws -> DecodedImage {
        let source = image.pixelSize
        let radius = effectiveRadius(forSource: source)
        guard radius > 0 else { return image }
        let plan = RedrawPlan(
            canvasSize: source, drawRect: PixelRect(x: 0, y: 0, width: source.width, height: source.height),
            clip: .roundedRect(radius: radius))
        return try PixelCanvas.redraw(image, plan, by: identifier)
    }
}
