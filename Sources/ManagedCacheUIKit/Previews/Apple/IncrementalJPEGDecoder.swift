#if canImport(ImageIO)
import CoreGraphics
import Foundation
import ImageIO
import ManagedCacheLocking

/// Decodes what has arrived of a progressive JPEG with ImageIO's incremental source, one source
/// for a whole download, downsampled to the final image's size and decompressed. The source (a
/// `CGImageSource`, not Sendable) lives in a lock; the manager asks for one preview of a session
/// at a time anyway.
final class IncrementalJPEGDecoder: Sendable {
    private let source = Lock<CGImageSource?>(nil)

    /// The image in `data` (the download so far), or `nil` when ImageIO cannot show it yet.
    func decode(_ data: Data, maximumPixelDimension: Int) -> DecodedImage? {
        let image = source.withLock { slot -> CGImage? in
            let source = slot ?? CGImageSourceCreateIncremental([kCGImageSourceShouldCache: false] as CFDictionary)
            slot = source
            CGImageSourceUpdateData(source, data as CFData, false)
            let options: [CFString: Any] = [
                kCGImageSourceCreateThumbnailFromImageAlways: true,
                kCGImageSourceCreateThumbnailWithTransform: true,
                kCGImageSourceShouldCacheImmediately: true,
                kCGImageSourceThumbnailMaxPixelSize: max(1, maximumPixelDimension),
            ]
            return CGImageSourceCreateThumbnailAtIndex(source, 0, options as CFDictionary)
        }
        guard let image else { return nil }
        return DecodedImage(format: .jpeg, bitmap: PlatformBitmap(image), frameCount: 1, transformations: [])
    }
}
#endif
