#if canImport(ImageIO)
import CoreGraphics
#if canImport(UIKit)
import UIKit
#endif

extension DecodedImage {
    /// Wraps a bitmap (a placeholder or failure image drawn by the app, or a transform's output).
    /// `format` is `nil`: the image did not come from encoded bytes.
    ///
    /// - Parameters:
    ///   - cgImage: The bitmap.
    ///   - transformations: What was done to it, for descriptions and tests. Default none.
    public init(cgImage: CGImage, transformations: [String] = []) {
        self.init(format: nil, bitmap: PlatformBitmap(cgImage), frameCount: 1, transformations: transformations)
    }

    /// The decompressed bitmap, or `nil` for an image that was only validated.
    public var cgImage: CGImage? { bitmap?.cgImage }

    #if canImport(UIKit)
    /// Wraps a `UIImage`'s bitmap (for placeholders: `DecodedImage(uiImage: UIImage(named: "avatar")!)`).
    /// Returns `nil` for images without a `CGImage` (CIImage-backed or symbol images).
    /// Keeps the image's `imageOrientation` (a photo from the camera is stored sideways with
    /// `.right`), so it displays upright and reports its upright size.
    ///
    /// - Parameter uiImage: The image to wrap.
    public init?(uiImage: UIImage) {
        guard let cgImage = uiImage.cgImage else { return nil }
        self.init(
            format: nil, bitmap: PlatformBitmap(cgImage), frameCount: 1, transformations: [],
            orientation: ImageOrientation(uiImage.imageOrientation))
    }

    /// Makes a `UIImage` of the bitmap, for an image view.
    ///
    /// - Parameter scale: Pixels per point (the screen's scale for a view's image). Default 1.
    /// - Returns: The bitmap as a `UIImage` that displays upright, or `nil` for an image that was
    ///   only validated (it has no bitmap).
    public func uiImage(scale: CGFloat = 1) -> UIImage? {
        cgImage.map { UIImage(cgImage: $0, scale: scale, orientation: UIImage.Orientation(orientation)) }
    }
    #endif
}

#if canImport(UIKit)
/// `UIImage.Orientation` beside the EXIF orientation it stands for, one pair per case.
private let orientationPairs: [(uiKit: UIImage.Orientation, exif: ImageOrientation)] = [
    (.up, .up), (.upMirrored, .upMirrored), (.down, .down), (.downMirrored, .downMirrored),
    (.leftMirrored, .leftMirrored), (.right, .right), (.rightMirrored, .rightMirrored), (.left, .left),
]

extension ImageOrientation {
    /// The EXIF orientation of a `UIImage.Orientation` (`.up` for a case added later).
    init(_ orientation: UIImage.Orientation) {
        self = orientationPairs.first { $0.uiKit == orientation }?.exif ?? .up
    }
}

extension UIImage.Orientation {
    /// The `UIImage.Orientation` of an EXIF orientation.
    init(_ orientation: ImageOrientation) {
        self = orientationPairs.first { $0.exif == orientation }?.uiKit ?? .up
    }
}
#endif
#endif
