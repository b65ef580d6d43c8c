import Foundation

/// A backend that turns image bytes into `DecodedImage`s: the part of image decoding that
/// differs between platforms. `ImageDecoder` drives it (pixel limit, format, transforms) for the manager.
///
/// The package provides `StructuralImageDecoding` (validates, keeps the bytes; the default on
/// Linux) and, on Apple platforms, `ImageIODecoding` (decompresses and downsamples with ImageIO;
/// the default there). Write your own to plug in another codec (a libwebp binding, a HEIC
/// decoder): `ImageDecoder(backend: MyDecoding())`.
///
/// Every method is called off the main thread, once per decode, and may be called concurrently.
public protocol ImageDecoding: Sendable {
    /// Reads the format, pixel size and frame count without decompressing pixels, rejecting bytes
    /// that are not a complete image. Default: ``ImageValidator/validate(_:)`` (PNG, JPEG, GIF, WebP).
    ///
    /// - Parameter data: The downloaded bytes.
    /// - Returns: What the bytes declare.
    /// - Throws: ``ImageDecodingError/invalidImage(_:)`` for bytes that are not a complete image
    ///   of a format the backend reads.
    func inspect(_ data: Data) throws(ImageDecodingError) -> ImageInfo

    /// Decodes inspected bytes.
    ///
    /// - Parameters:
    ///   - data: The bytes.
    ///   - info: What ``inspect(_:)`` found in them.
    ///   - maximumPixelDimension: When given, the backend may downsample so that the longer side is
    ///     at least that many pixels but not much more; `nil` decodes at full size.
    /// - Returns: The image.
    /// - Throws: ``ImageDecodingError/platformDecoderFailed(reason:)`` when the codec fails.
    func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage

    /// Draws an image into a new bitmap. Optional: the default returns `nil`.
    ///
    /// - Parameters:
    ///   - image: A decoded image.
    ///   - plan: The canvas and where the image goes on it (``ImageResizePlan``).
    /// - Returns: The new image, or `nil` when the backend has no pixels to draw (Linux).
    func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage?

    /// Encodes an image for storing a format's variant on disk. Optional: the default returns `nil`.
    ///
    /// - Parameters:
    ///   - image: A decoded (usually resized) image.
    ///   - compressionQuality: The JPEG quality, 0 to 1; images that may be transparent are stored as PNG.
    /// - Returns: The encoded bytes, or `nil` when the backend cannot encode.
    func encode(_ image: DecodedImage, compressionQuality: Double) -> Data?

    /// Whether `resize` and `encode` work, so formats' variants are worth storing. Default `false`.
    var canTransformPixels: Bool { get }
}

extension ImageDecoding {
    /// Validates the structure with ``ImageValidator``.
    ///
    /// - Parameter data: The downloaded bytes.
    /// - Returns: The format, pixel size, frame count and orientation the bytes declare.
    /// - Throws: ``ImageDecodingError/unsupportedFormat(_:)`` for AVIF and HEIC (recognised by
    ///   their signature, decoded by no backend without a platform decoder), else
    ///   ``ImageDecodingError/invalidImage(_:)`` with the validator's reason.
    public func inspect(_ data: Data) throws(ImageDecodingError) -> ImageInfo {
        let route = ImageFormatSupport.route(
            for: ImageValidator.detectFormat(data), platformReads: [], hasPlatformDecoder: false)
        if case .unsupported(let format) = route { throw .unsupportedFormat(format) }
        do {
            return try ImageValidator.validate(data)
        } catch {
            throw .invalidImage(error)
        }
    }

    /// Resizes nothing: no pixels to resize.
    ///
    /// - Parameters:
    ///   - image: A decoded image.
    ///   - plan: The resize it would do.
    /// - Returns: `nil`.
    public func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage? { nil }

    /// Encodes nothing.
    ///
    /// - Parameters:
    ///   - image: A decoded image.
    ///   - compressionQuality: The quality it would use.
    /// - Returns: `nil`.
    public func encode(_ image: DecodedImage, compressionQuality: Double) -> Data? { nil }

    /// `false`.
    public var canTransformPixels: Bool { false }
}

/// The backend with no pixels: it validates the structure of PNG, JPEG, GIF and WebP bytes
/// (rejecting truncated and corrupt data) and returns an image value holding them, undecoded.
///
/// The default backend on Linux, where no system image decoder exists. It cannot resize or
/// re-encode, so formats' size and scale mode have no effect with it (their transforms still run).
public struct StructuralImageDecoding: ImageDecoding {
    /// Creates the backend.
    public init() {}

    /// Returns the validated bytes as an image.
    ///
    /// - Parameters:
    ///   - data: The bytes, already validated.
    ///   - info: What validation found.
    ///   - maximumPixelDimension: Ignored: nothing is decoded.
    /// - Returns: An image holding the bytes, with `info`'s format and size.
    /// - Throws: Never.
    public func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage {
        DecodedImage(info: info, encodedData: data)
    }
}
