/// What a successful structural validation learned about an image.
public struct ImageInfo: Sendable, Hashable {
    /// The container format the bytes are in.
    public let format: ImageFormat
    /// The width in pixels: the canvas width for animations.
    public let pixelWidth: Int
    /// The height in pixels: the canvas height for animations.
    public let pixelHeight: Int
    /// How many frames the image holds: 1 for a still image, more for an animated GIF,
    /// animated WebP or animated PNG.
    public let frameCount: Int
    /// How the pixels must be turned to stand upright (JPEG EXIF); `.up` for other formats.
    public let orientation: ImageOrientation

    /// The size once upright: width and height swapped for EXIF orientations 5–8.
    public var orientedPixelSize: PixelSize {
        orientation.orientedSize(of: PixelSize(width: pixelWidth, height: pixelHeight))
    }

    /// Whether the image has more than one frame.
    public var isAnimated: Bool { frameCount > 1 }

    /// Creates a description of an image; the validators build these, and tests or other
    /// decoders may too.
    ///
    /// - Parameters:
    ///   - format: The format the bytes are in.
    ///   - pixelWidth: The stored width in pixels, before orientation.
    ///   - pixelHeight: The stored height in pixels, before orientation.
    ///   - frameCount: The number of frames. Default 1.
    ///   - orientation: The EXIF orientation. Default ``ImageOrientation/up``.
    public init(
        format: ImageFormat, pixelWidth: Int, pixelHeight: Int, frameCount: Int = 1, orientation: ImageOrientation = .up
    ) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.frameCount = frameCount
        self.orientation = orientation
    }
}
