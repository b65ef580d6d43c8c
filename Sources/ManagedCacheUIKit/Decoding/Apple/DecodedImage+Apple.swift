#if canImport(ImageIO)
import CoreGraphics
#if canImport(UIKit)
import UIKit
#endif

extension DecodedImage {
    /// Wraps a bitmap (a placeholder or failure image drawn by the app, or a transform's output).
    /// `format` is `nil`: the image did not come from encoded bytes.
    public init(cgImage: CGImage, transformations: [String] = []) {
        self.init(format: nil, bitmap: PlatformBitmap(cgImage), frameCount: 1, transformations: transformations)
    }

    /// The decompressed bitmap, or `nil` for an image that was only validated.
    public var cgImage: CGImage? { bitmap?.cgImage }

    #if canImport(UIKit)
    /// Wraps a `UIImage`'s bitmap (for placeholders: `DecodedImage(uiImage: UIImage(named: "avatar")!)`).
    /// Returns `nil` for images without a `CGImage` (CIImage-backed or symbol images).
    public init?(uiImage: UIImage) {
        guard let cgImage = uiImage.cgImage else { return nil }
        self.init(cgImage: cgImage)
    }

    /// A `UIImage` of the bitmap at `scale` pixels per point, or `nil` without a bitmap.
    public func uiImage(scale: CGFloat = 1) -> UIImage? {
        cgImage.map { UIImage(cgImage: $0, scale: scale, orientation: .up) }
    }
    #endif
}
#endif
