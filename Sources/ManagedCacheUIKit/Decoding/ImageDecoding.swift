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
    /// that are not a complete image. Default: `ImageValidator.validate(_:)` (PNG, JPEG, GIF, WebP).
    func inspect(_ data: Data) throws(ImageDecodingError) -> ImageInfo

    /// Decodes `data` (already inspected as `info`). When `maximumPixelDimension` is given, the
    /// backend may downsample so that the longer side is at least that many pixels but not much more.
    func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage

    /// Draws `image` into a new bitmap as `plan` says, or returns `nil` when the backend has no
    /// pixels to draw (Linux). Default: `nil`.
    func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage?

    /// Encodes `image` for storing a format's variant on disk (JPEG at `compressionQuality`, or
    /// PNG for images with alpha), or returns `nil` when it cannot. Default: `nil`.
    func encode(_ image: DecodedImage, compressionQuality: Double) -> Data?

    /// Whether `resize` and `encode` work, so formats' variants are worth storing. Default `false`.
    var canTransformPixels: Bool { get }
}

extension ImageDecoding {
    /// Validates the structure with `ImageValidator`.
    public func inspect(_ data: Data) throws(ImageDecodingError) -> ImageInfo {
        do {
            return try ImageValidator.validate(data)
        } catch {
            throw .invalidImage(error)
        }
    }

    /// Returns `nil`: no pixels to resize.
    public func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage? { nil }

    /// Returns `nil`: nothing to encode.
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

    /// Returns the validated bytes as an image; `maximumPixelDimension` is ignored (nothing is decoded).
    public func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage {
        DecodedImage(info: info, encodedData: data)
    }
}
