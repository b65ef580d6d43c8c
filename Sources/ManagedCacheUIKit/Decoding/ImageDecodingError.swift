/// Why an image decoder rejected bytes. The manager reports it to users as
/// `ManagedCacheError.decodingFailed(reason:)` with this error's `description`, and purges the
/// bytes from every cache.
public enum ImageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not a complete, well-formed PNG, JPEG, GIF or WebP (truncated download,
    /// corruption, unknown format).
    case invalidImage(ImageValidationError)
    /// The image declares more pixels than the decoder's `maximumPixelCount` allows: a
    /// decompression bomb, or simply too large to display.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The bytes could not be read (a cached file vanished or could not be mapped).
    case unreadable(reason: String)
    /// The platform decoder (ImageIO) refused bytes the structural validation accepted.
    case platformDecoderFailed(reason: String)
    /// An `ImageProcessor` threw, or a built-in one could not draw.
    case processingFailed(processor: String, reason: String)
    /// The bytes are a format recognised by its signature (AVIF, HEIC) that this platform cannot
    /// decode: no system decoder (Linux), or one that does not read it (AVIF before iOS 16 /
    /// macOS 13 / tvOS 16 / watchOS 9). See `ImageFormatSupport`.
    case unsupportedFormat(ImageFormat)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .invalidImage(let error):
            "Invalid image: \(error.description)"
        case .tooManyPixels(let width, let height, let limit):
            "The image is \(width)×\(height) pixels, more than the limit of \(limit) pixels."
        case .unreadable(let reason):
            "The image bytes could not be read: \(reason)."
        case .platformDecoderFailed(let reason):
            "The system image decoder failed: \(reason)."
        case .processingFailed(let processor, let reason):
            "The image processor \(processor) failed: \(reason)."
        case .unsupportedFormat(let format):
            "The image is \(format.displayName), which this platform cannot decode."
        }
    }
}
