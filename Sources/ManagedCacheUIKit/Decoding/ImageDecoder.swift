import Foundation
import ManagedCache

/// The `ObjectDecoding` for images: bytes in, a `DecodedImage` out, shared by every user of a
/// URL, format and processors.
///
/// 1. The backend inspects the bytes: truncated or corrupt PNG, JPEG, GIF and WebP are rejected
///    (the manager then reports `.decodingFailed` and purges the bytes from every cache).
/// 2. Images declaring more than `maximumPixelCount` pixels are rejected before any pixel is decoded.
/// 3. The backend decodes: on Linux it keeps the validated bytes; on Apple platforms ImageIO
///    decompresses them, off the main thread, downsampled to what the format (or a first
///    resizing processor) needs.
/// 4. With a `format`, the image is fitted to its size and the format's processors run; then the
///    decoder's own `processors` (see `ImageCacheFormat`, `ImageProcessor`).
///
/// Its `identifier` is "image" without a format and "image/<format name>" with one, followed by
/// ">" and the processors' identifiers when there are any, so each format and chain of processors
/// is its own cached variant while every variant of a URL shares one download. Where the backend
/// can re-encode (Apple platforms), a variant is also stored in the file cache.
///
/// ```swift
/// // Assumes `manager` (an ObjectManager) and `photoURL` (a URL).
/// let thumbnail = ImageCacheFormat(name: "thumbnail", size: PixelSize(width: 120, height: 120), scaleMode: .aspectFill)
/// let user = ObjectUser(request: ObjectRequest(url: photoURL), decoder: ImageDecoder(format: thumbnail)) { image, _ in
///     print("\(image.pixelWidth)×\(image.pixelHeight)")
/// }
/// manager.manage(user)
/// let blurred = ImageDecoder(processors: [BlurImageProcessor(radius: 12)])
/// ```
public struct ImageDecoder: ObjectDecoding {
    /// The default `maximumPixelCount`: 64 Mi pixels (8192 × 8192), a 256 MiB bitmap.
    public static let defaultMaximumPixelCount = 64 << 20

    /// The JPEG quality of an image the app stores without a format (`encode(_:)`): 0.9.
    public static let storedImageCompressionQuality = 0.9

    /// The format images are fitted and transformed to; `nil` keeps them as decoded.
    public let format: ImageCacheFormat?
    /// What is done to every image after the format's fitting and processors, in order. Default none.
    public let processors: [any ImageProcessor]
    /// The platform part of decoding. Default `ImageDecoder.platformBackend`.
    public let backend: any ImageDecoding
    /// The most pixels (width × height) an image may declare; `nil` for no limit.
    /// Default `defaultMaximumPixelCount`.
    public let maximumPixelCount: Int?
    /// The most bytes of decoded frames an animated image's frame buffer keeps, shared by every
    /// view showing it, and counted in its memory-cache cost. Default
    /// `defaultAnimationBufferByteLimit` (8 MiB). Decoders sharing a format name must agree on it.
    public var animationBufferByteLimit = ImageDecoder.defaultAnimationBufferByteLimit

    /// `ImageIODecoding` on Apple platforms, `StructuralImageDecoding` elsewhere.
    public static var platformBackend: any ImageDecoding {
        #if canImport(ImageIO)
        ImageIODecoding()
        #else
        StructuralImageDecoding()
        #endif
    }

    /// Creates a decoder. Decoders sharing a format name and processors must share their backend
    /// and pixel limit too, since they share cached images.
    ///
    /// - Parameters:
    ///   - format: The format to fit images to. Default `nil`: images as decoded.
    ///   - processors: What runs after the format, in order. Default none.
    ///   - backend: The platform part of decoding. Default ``platformBackend``.
    ///   - maximumPixelCount: The most pixels an image may declare; `nil` for no limit.
    ///     Default ``defaultMaximumPixelCount``.
    public init(
        format: ImageCacheFormat? = nil, processors: [any ImageProcessor] = [],
        backend: any ImageDecoding = ImageDecoder.platformBackend,
        maximumPixelCount: Int? = ImageDecoder.defaultMaximumPixelCount
    ) {
        self.format = format
        self.processors = processors
        self.backend = backend
        self.maximumPixelCount = maximumPixelCount
    }

    /// "image", or "image/<format name>", then ">" and the processors' identifiers when there are any.
    public var identifier: String {
        let base = format?.variantIdentifier ?? ImageCacheFormat.originalIdentifier
        return processors.isEmpty ? base : "\(base)>\(ImageProcessing.identifier(of: processors))"
    }

    /// Whether images are transformed at all (a format or processors): they are then a variant of
    /// the download, not the download itself.
    public var makesVariant: Bool { format != nil || !processors.isEmpty }

    /// Decodes loaded bytes for the manager.
    ///
    /// - Parameter data: The loaded bytes; a stored variant's bytes skip the format's transforms.
    /// - Returns: The image, fitted to the format if there is one.
    /// - Throws: ``ImageDecodingError``: unreadable, invalid, too many pixels, or the codec failed.
    public func decode(_ data: LoadedData) throws -> DecodedImage {
        let bytes: Data
        do {
            bytes = try data.bytes()
        } catch {
            throw ImageDecodingError.unreadable(reason: String(describing: error))
        }
        return try decodeImage(bytes, isStoredVariant: data.isStoredVariant)
    }

    /// Decodes bytes directly, without a manager: placeholders, failure images, tests.
    ///
    /// - Parameters:
    ///   - data: Image bytes.
    ///   - isStoredVariant: Whether the bytes are this variant's stored bytes, already
    ///     processed. Default `false`.
    /// - Returns: The image, fitted to the format if there is one.
    /// - Throws: ``ImageDecodingError/invalidImage(_:)``, ``ImageDecodingError/tooManyPixels(width:height:limit:)``
    ///   or ``ImageDecodingError/platformDecoderFailed(reason:)``.
    public func decodeImage(_ data: Data, isStoredVariant: Bool = false) throws(ImageDecodingError) -> DecodedImage {
        let info = try backend.inspect(data)
        if let maximumPixelCount {
            let declared = PixelSize(width: info.pixelWidth, height: info.pixelHeight)
            guard declared.pixelCount <= maximumPixelCount else {
                throw .tooManyPixels(width: info.pixelWidth, height: info.pixelHeight, limit: maximumPixelCount)
            }
        }
        // Upright: a portrait photo stored as landscape pixels (EXIF 5–8) is planned as portrait.
        let dimension = decodeDimension(forSource: info.orientedPixelSize, isStoredVariant: isStoredVariant)
        var image = try backend.decode(data, info: info, maximumPixelDimension: dimension)
        if !isStoredVariant { image = try processImage(image) }
        return finishAnimation(of: image, data: data, info: info, maximumPixelDimension: dimension)
    }

    /// What this decoder makes of an image that is already decoded (one the app has, for
    /// `ObjectManager.storeImage`): the format's fitting and processors, then `processors`. The
    /// image itself without a format or processors. Runs on the calling thread. The same work is
    /// done to an image, each frame of an animation and each progressive preview, so all of them
    /// look alike.
    ///
    /// - Parameter image: A decoded image, upright.
    /// - Returns: The variant this decoder makes of it, or `image` itself.
    /// - Throws: ``ImageDecodingError/processingFailed(processor:reason:)`` when a processor throws.
    public func processImage(_ image: DecodedImage) throws(ImageDecodingError) -> DecodedImage {
        guard makesVariant else { return image }
        var image = try ImageProcessing.run(format?.processorsBeforeFitting ?? [], on: image)
        if let format, let plan = format.resizePlan(forSource: image.pixelSize), !plan.leavesUnchanged(image.pixelSize),
            let resized = backend.resize(image, with: plan)
        {
            image = resized.addingTransformation("resized to \(plan.canvasSize) (\(format.scaleMode.rawValue))")
        }
        return try ImageProcessing.run((format?.processorsAfterFitting ?? []) + processors, on: image)
    }

    /// `processImage` for a frame of an animation or a progressive preview: a processor that
    /// throws leaves that frame or preview as it was decoded (the image itself failed already or
    /// will fail).
    func applyFormat(to decoded: DecodedImage) -> DecodedImage {
        (try? processImage(decoded)) ?? decoded
    }

    /// The longer side, in pixels, images of `source` size are decoded at (`nil`: full size): the
    /// format's fitting decides when it has a size, else a first processor that can tell (a
    /// resize); `isStoredVariant` bytes are decoded as they are.
    func decodeDimension(forSource source: PixelSize, isStoredVariant: Bool = false) -> Int? {
        guard makesVariant, !isStoredVariant else { return nil }
        if let format, format.size != nil {
            return format.resizePlan(forSource: source)?.decodeDimension(forSource: source)
        }
        guard format?.processorsBeforeFitting.isEmpty ?? true else { return nil }
        return ((format?.processors ?? []) + processors).first?.decodeDimension(forSource: source)
    }

    /// The decoded bitmap's size, not the encoded size, plus an animation's frame buffer limit.
    ///
    /// - Parameters:
    ///   - object: A decoded image.
    ///   - byteCount: The size of the bytes it came from (not used).
    /// - Returns: ``DecodedImage/memoryCost``.
    public func cost(of object: DecodedImage, byteCount: Int) -> Int { object.memoryCost }

    /// `true` when images are a variant (a format or processors), the backend can re-encode them
    /// (Apple platforms) and the format does not keep its variants in memory only: the variant is
    /// then stored in the file cache under its own key, and later loads skip the download and the
    /// processing. On Linux variants are kept in memory only.
    public var storesVariant: Bool {
        makesVariant && backend.canTransformPixels && (format?.storesVariantInFileCache ?? true)
    }

    /// The variant's bytes, encoded by the backend at the format's compression quality (0.8
    /// without one); `nil` for
    /// an animation (a stored still would replace it), whose original stays in the file cache.
    ///
    /// - Parameter object: An image this decoder made.
    /// - Returns: The encoded bytes, or `nil` for an animation or when the
    ///   backend cannot encode.
    public func encodedVariant(of object: DecodedImage) -> Data? {
        guard storesVariant, object.animation == nil else { return nil }
        return backend.encode(object, compressionQuality: format?.compressionQuality ?? 0.8)
    }

    /// The bytes an image the app stores goes to the file cache as:
    /// - a variant the decoder stores: its encoded variant (`encodedVariant(of:)`);
    /// - an image that still holds the bytes it came from (Linux, or an image only validated):
    ///   those bytes;
    /// - an image without a format or processors: encoded by the backend (Apple platforms:
    ///   ImageIO, drawn upright, JPEG at `storedImageCompressionQuality` when opaque, else PNG);
    /// - otherwise `nil`: a processed image that is kept in memory only has no bytes of its own,
    ///   and an animation without its bytes would be stored as a still.
    ///
    /// - Parameter object: The image to store.
    /// - Returns: The bytes to write, or `nil` when the image cannot be written (it is then stored
    ///   in memory only, and the store reports `StoreError.encodingUnsupported`).
    /// - Throws: Never; the signature is the protocol's.
    public func encode(_ object: DecodedImage) throws -> Data? {
        if storesVariant { return encodedVariant(of: object) }
        if let bytes = object.encodedData { return bytes }
        guard !makesVariant, object.animation == nil else { return nil }
        return backend.encode(object, compressionQuality: Self.storedImageCompressionQuality)
    }

    /// The format's `keepsOriginal` (`true` without a format).
    public var keepsOriginal: Bool { format?.keepsOriginal ?? true }
}
