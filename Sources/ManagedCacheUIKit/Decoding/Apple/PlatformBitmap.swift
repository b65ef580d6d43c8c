#if canImport(ImageIO)
import CoreGraphics
import Foundation

/// Holds a decoded `CGImage` inside a `DecodedImage`.
///
/// `@unchecked Sendable` is safe here: the only stored property is a `let` holding a `CGImage`,
/// and a `CGImage` is immutable once created (Core Graphics documents image objects as
/// immutable and safe to use from any thread). Nothing can mutate the box or its image.
/// Equality compares pixels (see `==`), so two decodes of one file are equal `DecodedImage`s on
/// macOS as on Linux, where equal encoded bytes make equal images.
final class PlatformBitmap: @unchecked Sendable, Equatable {
    let cgImage: CGImage

    init(_ cgImage: CGImage) {
        self.cgImage = cgImage
    }

    /// Equal when the pixels are: same geometry, same layout, same bytes. Not identity: two
    /// decodes of the same file are equal images (what tests and `DecodedImage`'s `==` mean), and
    /// comparing bytes costs a copy of each bitmap, which only equality checks pay.
    static func == (lhs: PlatformBitmap, rhs: PlatformBitmap) -> Bool {
        if lhs === rhs { return true }
        let (a, b) = (lhs.cgImage, rhs.cgImage)
        guard a.width == b.width, a.height == b.height, a.bitsPerPixel == b.bitsPerPixel,
            a.bytesPerRow == b.bytesPerRow, a.bitmapInfo == b.bitmapInfo,
            let first = a.dataProvider?.data, let second = b.dataProvider?.data
        else { return false }
        return (first as Data) == (second as Data)
    }
}
#endif
