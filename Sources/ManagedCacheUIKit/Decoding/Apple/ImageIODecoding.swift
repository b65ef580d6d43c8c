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
/// is applied. Only the first frame of an animation is decoded.
public struct ImageIODecoding: ImageDecoding {
    /// Creates the backend.
    public init() {}

    /// `true`: ImageIO and Core Graphics resize and re-encode.
    public var canTransformPixels: Bool { true }

    /// Decodes the first frame with ImageIO, downsampled to `maximumPixelDimension` on its longer
    /// side when given, oriented upright and decompressed.
    public func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage {
        let sourceOptions = [kCGImageSourceShouldCache: false] as CFDictionary
        guard let source = CGImageSourceCreateWithData(data as CFData, sourceOptions) else {
            throw .platformDecoderFailed(reason: "ImageIO could not open the \(info.format.rawValue) data")
        }
        // A thumbnail of the full size when no smaller one is asked for: the same call then
        // decodes, applies the orientation and decompresses in one step.
        let dimension = maximumPixelDimension ?? max(info.pixelWidth, info.pixelHeight)
        let options: [CFString: Any] = [
            kCGImageSourceCreateThumbnailFromImageAlways: true,
            kCGImageSourceCreateThumbnailWithTransform: true,
            kCGImageSourceShouldCacheImmediately: true,
            kCGImageSourceThumbnailMaxPixelSize: max(1, dimension),
        ]
        guard let image = CGImageSourceCreateThumbnailAtIndex(source, 0, options as CFDictionary) else {
            throw .platformDecoderFailed(reason: "ImageIO could not decode the \(info.format.rawValue) data")
        }
        return DecodedImage(format: info.format, bitmap: PlatformBitmap(image), frameCount: info.frameCount,
                            transformations: [])
    }

    /// Draws the image into a new sRGB bitmap of the plan's canvas size, at the plan's rectangle.
    public func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage? {
        guard let source = image.cgImage, let colorSpace = CGColorSpace(name: CGColorSpace.sRGB),
              let context = CGContext(
                data: nil, width: plan.canvasSize.width, height: plan.canvasSize.height, bitsPerComponent: 8,
                bytesPerRow: 0, space: colorSpace, bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue)
        else { return nil }
        context.interpolationQuality = .high
        // The plan measures from the top left; Core Graphics from the bottom left.
        let rect = plan.drawRect
        let flippedY = plan.canvasSize.height - rect.y - rect.height
        context.draw(source, in: CGRect(x: rect.x, y: flippedY, width: rect.width, height: rect.height))
        guard let resized = context.makeImage() else { return nil }
        return DecodedImage(format: image.format, bitmap: PlatformBitmap(resized), frameCount: image.frameCount,
                            transformations: image.transformations)
    }

    /// Encodes as JPEG at `compressionQuality`, or as PNG when the bitmap has alpha.
    public func encode(_ image: DecodedImage, compressionQuality: Double) -> Data? {
        guard let cgImage = image.cgImage else { return nil }
        let type: UTType
        switch cgImage.alphaInfo {
        case .none, .noneSkipFirst, .noneSkipLast: type = .jpeg
        default: type = .png
        }
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
