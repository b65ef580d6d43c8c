#if canImport(ImageIO)
import CoreGraphics
import Foundation
import ImageIO
import UniformTypeIdentifiers

/// The Apple-platform backend: ImageIO decodes, downsamples and decompresses; Core Graphics
/// resizes and ImageIO re-encodes variants. The default backend wherever ImageIO exists.
///
/// Decoding runs wherever the manager decodes (never on the main thread for asynchronous loads).
/// The bitmap is decompressed before it is returned (`kCGImageSourceShouldCacheImmediately`, or
/// drawing when resizing), so displaying it never decodes on the main thread. EXIF orientation
/// is applied while decoding; an image that arrives with an orientation of its own (wrapped from
/// a `UIImage`) is drawn upright when it is resized or encoded. Only the first frame of an
/// animation is decoded.
///
/// Which bytes go to ImageIO is `ImageFormatSupport`'s decision: PNG, JPEG, GIF and WebP are
/// validated structurally first; AVIF and HEIC (recognised by their `ftyp` brands) go to ImageIO
/// where it reads them (`CGImageSourceCopyTypeIdentifiers()`: HEIC from iOS 11, AVIF from
/// iOS 16 / macOS 13) and are ``ImageDecodingError/unsupportedFormat(_:)`` where it does not;
/// bytes of no known signature (TIFF, BMP, …) are ImageIO's to judge.
public struct ImageIODecoding: ImageDecoding {
    /// The dynamic range images are decoded in. Default ``ImageDynamicRange/standard``.
    public let dynamicRange: ImageDynamicRange

    /// Creates the backend.
    ///
    /// - Parameter dynamicRange: ``ImageDynamicRange/high`` decodes HDR images in their extended
    ///   range where the system can (iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1). Default
    ///   ``ImageDynamicRange/standard``. Decoders sharing a format name must agree on it.
    public init(dynamicRange: ImageDynamicRange = .standard) {
        self.dynamicRange = dynamicRange
    }

    /// The formats ImageIO reads on this system, from the type identifiers it lists.
    static let readableFormats: Set<ImageFormat> = {
        let identifiers = CGImageSourceCopyTypeIdentifiers() as? [String] ?? []
        return Set(identifiers.map(ImageFormat.init(typeIdentifier:)))
    }()

    /// ImageIO's options for decoding one image at `maximumPixelDimension` on its longer side
    /// (a thumbnail of the full size decodes, orients and decompresses in one step) in
    /// `dynamicRange` (`ImageDynamicRange.decodeRequest`, where the system takes decode requests).
    static func decodeOptions(maximumPixelDimension: Int, dynamicRange: ImageDynamicRange) -> CFDictionary {
        var options: [CFString: Any] = [
            kCGImageSourceCreateThumbnailFromImageAlways: true,
            kCGImageSourceCreateThumbnailWithTransform: true,
            kCGImageSourceShouldCacheImmediately: true,
            kCGImageSourceThumbnailMaxPixelSize: max(1, maximumPixelDimension),
        ]
        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *) {
            switch dynamicRange.decodeRequest(systemTakesDecodeRequests: true) {
            case .toHDR: options[kCGImageSourceDecodeRequest] = kCGImageSourceDecodeToHDR
            case .toSDR: options[kCGImageSourceDecodeRequest] = kCGImageSourceDecodeToSDR
            case nil: break
            }
        }
        return options as CFDictionary
    }

    /// `true`: ImageIO and Core Graphics resize and re-encode.
    public var canTransformPixels: Bool { true }

    /// PNG, JPEG, GIF and WebP are validated structurally, as everywhere; bytes of any other
    /// format (HEIC, AVIF, TIFF, …) are valid when ImageIO reads them completely.
    ///
    /// - Parameter data: The downloaded bytes.
    /// - Returns: The format, pixel size, frame count and EXIF orientation.
    /// - Throws: ``ImageDecodingError/unsupportedFormat(_:)`` for AVIF where ImageIO does not
    ///   read it; ``ImageDecodingError/invalidImage(_:)`` for incomplete or unreadable bytes.
    public func inspect(_ data: Data) throws(ImageDecodingError) -> ImageInfo {
        let route = ImageFormatSupport.route(
            for: ImageValidator.detectFormat(data), platformReads: Self.readableFormats, hasPlatformDecoder: true)
        switch route {
        case .structural:
            do {
                return try ImageValidator.validate(data)
            } catch {
                throw .invalidImage(error)
            }
        case .platformDecoder:
            return try inspectWithImageIO(data)
        case .unsupported(let format):
            throw .unsupportedFormat(format)
        case .unknown:
            throw .invalidImage(.unknownFormat)
        }
    }

    /// What ImageIO reads of a format the structural validators do not know: complete data, a
    /// positive size, the frame count and the EXIF orientation.
    private func inspectWithImageIO(_ data: Data) throws(ImageDecodingError) -> ImageInfo {
        guard let source = CGImageSourceCreateWithData(data as CFData, [kCGImageSourceShouldCache: false] as CFDictionary),
            CGImageSourceGetStatus(source) == .statusComplete, CGImageSourceGetCount(source) > 0,
            let properties = CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as? [CFString: Any],
            let width = properties[kCGImagePropertyPixelWidth] as? Int,
            let height = properties[kCGImagePropertyPixelHeight] as? Int, width > 0, height > 0
        else { throw .invalidImage(.unknownFormat) }
        let type = CGImageSourceGetType(source).map { $0 as String } ?? ""
        let orientation = (properties[kCGImagePropertyOrientation] as? Int).flatMap(ImageOrientation.init(rawValue:)) ?? .up
        return ImageInfo(
            format: ImageFormat(typeIdentifier: type), pixelWidth: width, pixelHeight: height,
            frameCount: CGImageSourceGetCount(source), orientation: orientation)
    }

    /// Decodes the first frame with ImageIO, downsampled to `maximumPixelDimension` on its longer
    /// side when given, oriented upright and decompressed.
    ///
    /// - Parameters:
    ///   - data: The bytes, already inspected.
    ///   - info: What ``inspect(_:)`` found.
    ///   - maximumPixelDimension: The longer side to downsample to; `nil` decodes at full size.
    /// - Returns: The decompressed image.
    /// - Throws: ``ImageDecodingError/platformDecoderFailed(reason:)`` when ImageIO makes no image.
    public func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage {
        let sourceOptions = [kCGImageSourceShouldCache: false] as CFDictionary
        guard let source = CGImageSourceCreateWithData(data as CFData, sourceOptions) else {
            throw .platformDecoderFailed(reason: "ImageIO could not open the \(info.format.rawValue) data")
        }
        // A thumbnail of the full size when no smaller one is asked for: the same call then
        // decodes, applies the orientation and decompresses in one step.
        let dimension = maximumPixelDimension ?? max(info.pixelWidth, info.pixelHeight)
        let options = Self.decodeOptions(maximumPixelDimension: dimension, dynamicRange: dynamicRange)
        guard let image = CGImageSourceCreateThumbnailAtIndex(source, 0, options) else {
            throw .platformDecoderFailed(reason: "ImageIO could not decode the \(info.format.rawValue) data")
        }
        return DecodedImage(
            format: info.format, bitmap: PlatformBitmap(image, provenance: .imageSource), frameCount: info.frameCount,
            transformations: [])
    }

    /// Draws the image into a new bitmap of the plan's canvas size, at the plan's rectangle,
    /// upright: an image stored with an orientation (a camera photo wrapped from a `UIImage`) is
    /// turned as it says, not squashed into the upright canvas. Opaque when the source is, with
    /// the source's precision and colour space (``RedrawLayout``).
    ///
    /// - Parameters:
    ///   - image: A decoded image with a bitmap.
    ///   - plan: The canvas and the rectangle to draw the upright image in.
    /// - Returns: The new image (upright, `orientation == .up`), or `nil` when the image has no
    ///   bitmap or drawing fails.
    public func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage? {
        ProcessorDrawing.redraw(image, RedrawPlan(canvasSize: plan.canvasSize, drawRect: plan.drawRect, clip: .none))
    }

    /// Encodes upright pixels: as JPEG when they are opaque (a JPEG's always are, whatever alpha
    /// layout its decoded bitmap reports), else as PNG (`StoredImageEncoding`). An image not
    /// stored upright is drawn upright first, so the file decodes upright on the next launch.
    ///
    /// - Parameters:
    ///   - image: A decoded image with a bitmap.
    ///   - compressionQuality: The JPEG quality, 0 to 1.
    /// - Returns: The encoded bytes, or `nil` when the image has no bitmap, drawing it upright
    ///   fails or ImageIO fails.
    public func encode(_ image: DecodedImage, compressionQuality: Double) -> Data? {
        let encoding = StoredImageEncoding(for: image)
        var upright = image
        if let redraw = encoding.uprightRedraw {
            guard let drawn = ProcessorDrawing.redraw(image, redraw) else { return nil }
            upright = drawn
        }
        guard let cgImage = upright.cgImage else { return nil }
        let type: UTType = encoding.container == .jpeg ? .jpeg : .png
        let output = NSMutableData()
        guard let destination = CGImageDestinationCreateWithData(output as CFMutableData, type.identifier as CFString, 1, nil)
        else { return nil }
        let properties = [kCGImageDestinationLossyCompressionQuality: compressionQuality] as CFDictionary
        CGImageDestinationAddImage(destination, cgImage, properties)
        guard CGImageDestinationFinalize(destination) else { return nil }
        return output as Data
    }
}
#endif
