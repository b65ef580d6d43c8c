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
/// Its memory-cache cost is `memoryCost`: `decodedByteCount` (the bitmap's bytes per row × its
/// rows; width × height × 4 where there is no bitmap), plus for an animation the byte limit of its
/// frame buffer, counted the same way, so an animation's budget and what its frames take agree.
///
/// Two images are equal when they hold the same bitmap (copies of one decoded image, as the
/// caches share it), never by comparing pixels; two decodes of the same bytes are different
/// images on Apple platforms. On Linux, where an image holds its bytes and no bitmap, images of
/// equal bytes are equal.
///
/// An animated GIF, APNG or WebP carries its `animation` (frame durations, loop count) on every
/// platform; on Apple platforms it also carries the frames' source and buffer, shared by every view
/// showing it (`ManagedImageView` plays it).
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
    /// The bitmap (`cgImage`) is the first frame; `animation` says how the frames play.
    public let frameCount: Int
    /// How the frames play (durations, loop count), read from the bytes; `nil` for a still image
    /// and for an animation whose timing could not be read.
    public internal(set) var animation: AnimationInfo?
    /// The most bytes of decoded frames this image's frame buffer keeps (0 for a still image):
    /// part of `memoryCost`. Set by `ImageDecoder` from its `animationBufferByteLimit`.
    public internal(set) var frameBufferByteLimit = 0
    /// Set on a progressive preview (the first scans of a JPEG still downloading), `nil` on the
    /// image itself. Previews go only to users that want them and are never cached.
    public internal(set) var preview: ImagePreview?
    /// Whether this is a progressive preview rather than the image.
    public var isPreview: Bool { preview != nil }
    /// The encoded bytes, when kept: always on Linux, `nil` once a platform decoder has made a bitmap.
    public let encodedData: Data?
    /// Names of the transformations applied to this image, in order ("resized to 64×64 (aspectFill)",
    /// and whatever a format's pre- and post-transforms append). Empty for an image as decoded.
    public var transformations: [String]
    /// How the stored bitmap must be turned to stand upright. `.up` for everything the decoders
    /// make (ImageIO applies EXIF orientation while decoding; on Linux `pixelWidth`/`pixelHeight`
    /// are already the upright size); a `UIImage` wrapped as a placeholder keeps its
    /// `imageOrientation` here, and `uiImage(scale:)` gives it back. Resizing, processing and
    /// storing draw such an image upright: what they make is `.up`.
    public let orientation: ImageOrientation
    /// Whether every pixel is known to be opaque (`PixelOpacity`): a JPEG's pixels, a bitmap
    /// without alpha, a redraw of an opaque image that made no transparency. Decides the stored
    /// container (JPEG when opaque, else PNG).
    let isOpaque: Bool

    #if canImport(ImageIO)
    /// The decompressed bitmap, on platforms with a system decoder.
    let bitmap: PlatformBitmap?
    /// The animation's frames (decoded on demand into a shared buffer), for animated images.
    var animatedFrames: AnimatedFrames?
    #endif

    /// Describes an image that was validated but not decompressed: what the Linux decoder makes,
    /// and how tests and examples build placeholders from encoded bytes they made themselves.
    /// The size is the upright size (`ImageInfo.orientedPixelSize`): a portrait photo stored as
    /// landscape pixels (EXIF 5–8) is as tall as it looks.
    ///
    /// - Parameters:
    ///   - info: The validated format, size, frame count and orientation.
    ///   - encodedData: The image's bytes, or `nil`.
    ///   - transformations: What was done to it, for descriptions and tests. Default none.
    public init(info: ImageInfo, encodedData: Data?, transformations: [String] = []) {
        self.init(info: info, encodedData: encodedData, transformations: transformations, orientation: .up)
    }

    /// Describes pixels stored as `info` says, *not* upright: the size is the upright size and
    /// `orientation` is `info.orientation`, as for a camera photo wrapped from a `UIImage`. For
    /// pixel backends (and tests' stand-in backends) that keep the stored pixels and leave
    /// standing them upright to whatever draws them.
    init(storedAs info: ImageInfo, encodedData: Data?) {
        self.init(info: info, encodedData: encodedData, transformations: [], orientation: info.orientation)
    }

    private init(info: ImageInfo, encodedData: Data?, transformations: [String], orientation: ImageOrientation) {
        self.format = info.format
        let upright = info.orientedPixelSize
        self.pixelWidth = upright.width
        self.pixelHeight = upright.height
        self.orientation = orientation
        self.isOpaque = PixelOpacity.isOpaque(format: info.format, layoutHasAlpha: true)
        self.frameCount = info.frameCount
        self.encodedData = encodedData
        self.transformations = transformations
        if info.frameCount > 1, let encodedData { self.animation = AnimationInfo(parsing: encodedData) }
        #if canImport(ImageIO)
        self.bitmap = nil
        #endif
    }

    #if canImport(ImageIO)
    /// Wraps a bitmap made by a platform decoder or resizer.
    /// `orientation`: how the bitmap must be turned to stand upright (default `.up`); the size is
    /// the upright size. `isOpaque`: whether every pixel is opaque; default (`nil`) decides from
    /// the format and the bitmap's layout (`PixelOpacity`).
    init(
        format: ImageFormat?, bitmap: PlatformBitmap, frameCount: Int, transformations: [String],
        orientation: ImageOrientation = .up, isOpaque: Bool? = nil
    ) {
        self.format = format
        let upright = orientation.orientedSize(of: PixelSize(width: bitmap.cgImage.width, height: bitmap.cgImage.height))
        self.pixelWidth = upright.width
        self.pixelHeight = upright.height
        self.orientation = orientation
        self.isOpaque = isOpaque ?? PixelOpacity.isOpaque(format: format, layoutHasAlpha: bitmap.cgImage.hasAlphaChannel)
        self.frameCount = frameCount
        self.encodedData = nil
        self.transformations = transformations
        self.bitmap = bitmap
    }
    #endif

    /// The image's size in pixels.
    public var pixelSize: PixelSize { PixelSize(width: pixelWidth, height: pixelHeight) }

    /// The bytes the bitmap occupies once decoded: its bytes per row × its rows, row padding and
    /// 16-bit or float components included (on Apple platforms, the bitmap's own layout); width ×
    /// height × 4 (8-bit RGBA) for an image without a bitmap. An animation's frame budget and what
    /// its frame buffer charges per frame are counted the same way (`BitmapFootprint`).
    public var decodedByteCount: Int {
        #if canImport(ImageIO)
        if let bitmap { return BitmapFootprint.byteCount(of: bitmap.cgImage) }
        #endif
        return BitmapFootprint.byteCount(bytesPerRow: BitmapFootprint.rgba8BytesPerRow(width: pixelWidth), rows: pixelHeight)
    }

    /// The memory cache's cost for this image: `decodedByteCount`, plus `frameBufferByteLimit`
    /// for an animation (its frame buffer may hold that much more while views play it).
    public var memoryCost: Int {
        let (total, overflow) = decodedByteCount.addingReportingOverflow(frameBufferByteLimit)
        return overflow ? Int.max : total
    }

    /// Records a transformation, for transforms that say what they did.
    ///
    /// - Parameter name: What was done, such as `"rounded corners"`.
    /// - Returns: This image with `name` appended to ``transformations``.
    public func addingTransformation(_ name: String) -> DecodedImage {
        var copy = self
        copy.transformations.append(name)
        return copy
    }

    /// "png 64×48", plus the frame count and transformations when there are any.
    public var description: String {
        var text = "\(format?.rawValue ?? "bitmap") \(pixelSize)"
        if frameCount > 1 { text += ", \(frameCount) frames" }
        if let preview { text += ", preview of \(preview.completedScans) scans" }
        if !transformations.isEmpty { text += " [\(transformations.joined(separator: ", "))]" }
        return text
    }
}
