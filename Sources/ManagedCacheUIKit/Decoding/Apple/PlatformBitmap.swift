#if canImport(ImageIO)
import CoreGraphics

/// Holds a decoded `CGImage` inside a `DecodedImage`.
///
/// `@unchecked Sendable` is safe here: the only stored property is a `let` holding a `CGImage`,
/// and a `CGImage` is immutable once created (Core Graphics documents image objects as
/// immutable and safe to use from any thread). Nothing can mutate the box or its image.
/// Equality is identity, so two `DecodedImage`s are equal only when they share one bitmap.
final class PlatformBitmap: @unchecked Sendable, Equatable {
    let cgImage: CGImage

    init(_ cgImage: CGImage) {
        self.cgImage = cgImage
    }

    static func == (lhs: PlatformBitmap, rhs: PlatformBitmap) -> Bool { lhs === rhs }
}
#endif
