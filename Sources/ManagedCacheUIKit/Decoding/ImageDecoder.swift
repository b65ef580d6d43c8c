import Foundation
import ManagedCache

/// The `ObjectDecoding` for images: bytes in, a `DecodedImage` out, shared by every user of a
/// URL and format.
///
/// 1. The backend inspects the bytes: truncated or corrupt PNG, JPEG, GIF and WebP are rejected
///    (the manager then reports `.decodingFailed` and purges the bytes from every cache).
/// 2. Images declaring more than `maximumPixelCount` pixels are rejected before any pixel is decoded.
/// 3. The backend decodes: on Linux it keeps the validated bytes; on Apple platforms ImageIO
///    decompresses them, off the main thread, downsampled to what the format needs.
/// 4. With a `format`, its transforms run and the image is fitted to its size (see `ImageCacheFormat`).
///
/// Its `identifier` is "image" without a format and "image/<format name>" with one, so each format
/// is its own cached variant while every format of a URL shares one download. Where the backend
/// can re-encode (Apple platforms), a format's variant is also stored in the file cache.
///
/// ```swift
/// let user = ObjectUser(decoder: ImageDecoder(format: thumbnail)) { image, _ in show(image) }
/// ```
public struct ImageDecoder: ObjectDecoding {
    /// The default `maximumPixelCount`: 64 Mi pixels (8192 × 8192), a 256 MiB bitmap.
    public static let defaultMaximumPixelCount = 64 << 20

    /// The format images are fitted and transformed to; `nil` keeps them as decoded.
    public let format: ImageCacheFormat?
    /// The platform part of decoding. Default `ImageDecoder.platformBackend`.
    public let backend: any ImageDecoding
    /// The most pixels (width × height) an image may declare; `nil` for no limit.
    /// Default `defaultMaximumPixelCount`.
    public let maximumPixelCount: Int?

    /// `ImageIODecoding` on Apple platforms, `StructuralImageDecoding` elsewhere.
    public static var platformBackend: any ImageDecoding {
        #if canImport(ImageIO)
        ImageIODecoding()
        #else
        StructuralImageDecoding()
        #endif
    }

    /// Creates a decoder. Decoders sharing a format name must share their backend and pixel
    /// limit too, since they share cached images.
    public init(
        format: ImageCacheFormat? = nil, backend: any ImageDecoding = ImageDecoder.platformBackend,
        maximumPixelCount: Int? = ImageDecoder.defaultMaximumPixelCount
    ) {
        self.format = format
        self.backend = backend
        self.maximumPixelCount = maximumPixelCount
    }

    /// "image", or "image/<format name>".
    public var identifier: String { format?.variantIdentifier ?? ImageCacheFormat.originalIdentifier }

    /// Decodes loaded bytes for the manager; throws `ImageDecodingError`.
    public func decode(_ data: LoadedData) throws -> DecodedImage {
        let bytes: Data
        do {
            bytes = try data.bytes()
        } catch {
            throw ImageDecodingError.unreadable(reason: String(describing: error))
        }
        return try decodeImage(bytes, isStoredVariant: data.isStoredVariant)
    }

    /// Decodes `data` directly, without a manager: placeholders, failure images, tests.
    /// `isStoredVariant` means the bytes are this format's stored variant, already transformed.
    public func decodeImage(_ data: Data, isStoredVariant: Bool = false) throws(ImageDecodingError) -> DecodedImage {
        let info = try backend.inspect(data)
        if let maximumPixelCount {
            let declared = PixelSize(width: info.pixelWidth, height: info.pixelHeight)
            guard declared.pixelCount <= maximumPixelCount else {
                throw .tooManyPixels(width: info.pixelWidth, height: info.pixelHeight, limit: maximumPixelCount)
            }
        }
        guard let format, !isStoredVariant else {
            return try backend.decode(data, info: info, maximumPixelDimension: nil)
        }
        let source = PixelSize(width: info.pixelWidth, height: info.pixelHeight)
        let dimension = format.resizePlan(forSource: source)?.decodeDimension(forSource: source)
        var image = try backend.decode(data, info: info, maximumPixelDimension: dimension)
        if let preTransform = format.preTransform { image = preTransform(image) }
        if let plan = format.resizePlan(forSource: image.pixelSize), !plan.leavesUnchanged(image.pixelSize),
           let resized = backend.resize(image, with: plan) {
            image = resized.addingTransformation(
                "resized to \(plan.canvasSize) (\(format.scaleMode.rawValue))")
        }
        if let postTransform = format.postTransform { image = postTransform(image) }
        return image
    }

    /// The decoded bitmap's size, not the encoded size: `DecodedImage.decodedByteCount`.
    public func cost(of object: DecodedImage, byteCount: Int) -> Int { object.decodedByteCount }

    /// `true` when there is a format and the backend can re-encode its images (Apple platforms):
    /// the variant is then stored in the file cache under its own key and later loads skip the
    /// download and the transforms. On Linux formats are kept in memory only.
    public var storesVariant: Bool { format != nil && backend.canTransformPixels }

    /// The variant's bytes, encoded by the backend at the format's compression quality.
    public func encodedVariant(of object: DecodedImage) -> Data? {
        guard storesVariant, let format else { return nil }
        return backend.encode(object, compressionQuality: format.compressionQuality)
    }

    /// The format's `keepsOriginal` (`true` without a format).
    public var keepsOriginal: Bool { format?.keepsOriginal ?? true }
}
