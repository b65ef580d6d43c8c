#if canImport(ImageIO)
import CoreGraphics
import Foundation
import ImageIO

/// Decodes a progressive preview with ImageIO: the complete scans so far, closed with EOI
/// (`ProgressiveScanDetector.previewFile(of:)`), read as a whole file, oriented, downsampled to
/// the final image's size and decompressed, as `ImageIODecoding` decodes the image itself.
///
/// Not an incremental source (`CGImageSourceCreateIncremental`): Apple's documentation of it and
/// of `CGImageSourceCreateThumbnailAtIndex` promises no partial image of an incomplete
/// progressive JPEG, and such a source was reported to give none until the data is complete.
/// Each preview is decoded from its own data, so nothing is shared between calls.
enum PartialJPEGDecoder {
    /// The picture in `file`, or `nil` when ImageIO cannot read it.
    static func decode(_ file: Data, maximumPixelDimension: Int) -> DecodedImage? {
        guard let source = CGImageSourceCreateWithData(file as CFData, [kCGImageSourceShouldCache: false] as CFDictionary) else {
            return nil
        }
        let options: [CFString: Any] = [
            kCGImageSourceCreateThumbnailFromImageAlways: true,
            kCGImageSourceCreateThumbnailWithTransform: true,
            kCGImageSourceShouldCacheImmediately: true,
            kCGImageSourceThumbnailMaxPixelSize: max(1, maximumPixelDimension),
        ]
        guard let image = CGImageSourceCreateThumbnailAtIndex(source, 0, options as CFDictionary) else { return nil }
        return DecodedImage(format: .jpeg, bitmap: PlatformBitmap(image, provenance: .imageSource), frameCount: 1, transformations: [])
    }
}
#endif
