/// Blurs an image (a Gaussian blur of `radius` pixels, approximated by three box blurs, as
/// browsers do for CSS blurs): backgrounds behind text, placeholders made from a thumbnail.
///
/// ```swift
/// let backdrop = ImageCacheFormat(name: "backdrop", processors: [BlurImageProcessor(radius: 8)])
/// ```
public struct BlurImageProcessor: ImageProcessor {
    /// The blur's standard deviation in pixels. 0 or less leaves the image unchanged.
    public let radius: Double

    /// Blurs by `radius` pixels.
    ///
    /// - Parameter radius: The blur's standard deviation in pixels; 0 or less leaves images unchanged.
    public init(radius: Double) {
        self.radius = radius
    }

    /// "blur(8.0)".
    public var identifier: String { "blur(\(radius))" }

    /// The odd width of each of the three box blurs that approximate a Gaussian of standard
    /// deviation `radius` (the SVG and CSS filter effects specification's formula), or `nil` when
    /// there is nothing to blur.
    ///
    /// - Parameter radius: The blur's standard deviation in pixels.
    /// - Returns: An odd box width greater than 1, or `nil` for a radius too small (or not finite) to blur.
    public static func boxSize(forRadius radius: Double) -> Int? {
        guard radius.isFinite, radius > 0 else { return nil }
        let size = Int((radius * 3 * (2 * Double.pi).squareRoot() / 4 + 0.5).rounded(.down))
        guard size > 1 else { return nil }
        return size % 2 == 0 ? size + 1 : size
    }

    /// The blurred image, the same size; the image itself when the radius is too small to blur.
    ///
    /// - Parameter image: The image so far (the decoded image, or the previous processor's result).
    /// - Returns: The blurred image (Apple platforms: vImage; elsewhere the transformation recorded).
    /// - Throws: `ImageDecodingError.processingFailed` when vImage cannot blur the image (Apple
    ///   platforms); nothing elsewhere.
    public func process(_ image: DecodedImage) throws -> DecodedImage {
        guard let box = Self.boxSize(forRadius: radius) else { return image }
        return try PixelCanvas.blur(image, boxSize: box, by: identifier)
    }
}
