#if canImport(ImageIO)
import CoreGraphics

/// A decoded `CGImage` inside a `DecodedImage`, compared by identity (see `BitmapBox`). A
/// `CGImage` is immutable and Sendable (Apple documents image objects as immutable and safe to
/// use from any thread), so the box is Sendable without exception.
typealias PlatformBitmap = BitmapBox<CGImage>

extension BitmapBox where Pixels == CGImage {
    /// The bitmap.
    var cgImage: CGImage { pixels }
}

extension BitmapFootprint {
    /// The bytes `image` occupies: its `bytesPerRow × height`.
    static func byteCount(of image: CGImage) -> Int {
        byteCount(bytesPerRow: image.bytesPerRow, rows: image.height)
    }
}

extension CGImage {
    /// Whether the bitmap's layout has an alpha channel (`.none`, `.noneSkipFirst` and
    /// `.noneSkipLast` have none).
    var hasAlphaChannel: Bool {
        switch alphaInfo {
        case .none, .noneSkipFirst, .noneSkipLast: false
        default: true
        }
    }

    /// Whether the bitmap's components are floating-point values (`CGBitmapInfo.floatComponents`).
    var hasFloatComponents: Bool { bitmapInfo.contains(.floatComponents) }
}
#endif
