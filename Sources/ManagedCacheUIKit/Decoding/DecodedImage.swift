import Foundation

/// A decoded image, shared by every user of one URL and format: the object image views display
/// and the memory cache holds.
///
/// - On every platform it knows its container `format`, pixel size and frame count.
/// - On Linux (no system image decoder) it keeps the validated `encodedData`; nothing is
///   decompressed, so `cgImage` does not exist there.
/// - On Apple platforms it wraps the decompressed, downsampled bitmap (`cgImage`, and `uiImage(scale:)`
///   where UIKit exists) and does not keep the encoded bytes, which would cost memory for nothing.
///
/// Its memory-cache cost is `decodedByteCount` (width × height × 4 bytes), the size of the bitmap,
/// on every platform, so cache budgets mean the same thing on a phone and in a Linux test.
///
/// Formats' transforms receive and return values of this type; `transformations` records what
/// was done to an image, for logs and tests.
public struct DecodedImage: Sendable, Equatable, CustomStringConvertible {
    /// The container format the image was decoded from; `nil` for an image made from a bitmap
    /// (a placeholder built from a `CGImage` or `UIImage`).
    public let format: ImageFormat?
    /// The width of the bitmap in pixels (of the first frame's canvas for animations).
    public let pixelWidth: Int
    /// The height of the bitmap in pixels.
    public let pixelHeight: Int
    /// Frames in the source: 1 for a still image, more for an animated GIF, WebP or PNG.
    /// Apple platforms decode the first frame.
    public let frameCount: Int
    /// The encoded bytes, when kept: always on Linux, `nil` once a platform decoder has made a bitmap.
    public let encodedData: Data?
    /// Names of the transformations applied to this image, in order ("resized to 64×64 (aspectFill)",
    /// and whatever a format's pre- and post-transforms append). Empty for an image as decoded.
    public var transformations: [String]

    #if canImport(ImageIO)
    /// The decompressed bitmap, on platforms with a system decoder.
    let bitmap: PlatformBitmap?
    #endif

    /// Describes an image that was validated but not decompressed: what the Linux decoder makes,
    /// and how tests and examples build placeholders from `ImageFixtureEncoder` bytes.
    public init(info: ImageInfo, encodedData: Data?, transformations: [String] = []) {
        self.format = info.format
        self.pixelWidth = info.pixelWidth
        self.pixelHeight = info.pixelHeight
        self.frameCount = info.frameCount
        self.encodedData = encodedData
        self.transformations = transformations
        #if canImport(ImageIO)
        self.bitmap = nil
        #endif
    }

    #if canImport(ImageIO)
    /// Wraps a bitmap made by a platform decoder or resizer.
    init(format: ImageFormat?, bitmap: PlatformBitmap, frameCount: Int, transformations: [String]) {
        self.format = format
        self.pixelWidth = bitmap.cgImage.width
        self.pixelHeight = bitmap.cgImage.height
        self.frameCount = frameCount
        self.encodedData = nil
        self.transformations = transformations
        self.bitmap = bitmap
    }
    #endif

    /// The image's size in pixels.
    public var pixelSize: PixelSize { PixelSize(width: pixelWidth, height: pixelHeight) }

    /// The bytes the bitmap occupies once decoded: width × height × 4 (8-bit RGBA). The memory
    /// cache's cost for this image.
    public var decodedByteCount: Int {
        let (bytes, overflow) = pixelSize.pixelCount.multipliedReportingOverflow(by: 4)
        return overflow ? Int.max : bytes
    }

    /// This image with `name` appended to `transformations`: for transforms that record what they did.
    public func addingTransformation(_ name: String) -> DecodedImage {
        var copy = self
        copy.transformations.append(name)
        return copy
    }

    /// "png 64×48", plus the frame count and transformations when there are any.
    public var description: String {
        var text = "\(format?.rawValue ?? "bitmap") \(pixelSize)"
        if frameCount > 1 { text += ", \(frameCount) frames" }
        if !transformations.isEmpty { text += " [\(transformations.joined(separator: ", "))]" }
        return text
    }
}
