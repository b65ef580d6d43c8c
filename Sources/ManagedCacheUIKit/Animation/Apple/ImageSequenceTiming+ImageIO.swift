#if canImport(ImageIO)
import Foundation
import ImageIO

extension ImageSequenceTiming {
    /// The timing ImageIO reports for an animated HEIC (HEICS): each frame's
    /// `kCGImagePropertyHEICSDictionary` (`kCGImagePropertyHEICSUnclampedDelayTime`,
    /// `kCGImagePropertyHEICSDelayTime`) and the file's `kCGImagePropertyHEICSLoopCount`. `nil`
    /// for fewer than two frames, or when a frame has no HEICS properties (a HEIF collection of
    /// still images, not a sequence).
    init?(imageIOData data: Data) {
        guard let source = CGImageSourceCreateWithData(data as CFData, [kCGImageSourceShouldCache: false] as CFDictionary)
        else { return nil }
        let count = CGImageSourceGetCount(source)
        guard count > 1 else { return nil }
        var frames: [Frame] = []
        frames.reserveCapacity(count)
        for index in 0..<count {
            let properties = CGImageSourceCopyPropertiesAtIndex(source, index, nil) as? [CFString: Any]
            guard let sequence = properties?[kCGImagePropertyHEICSDictionary] as? [CFString: Any] else { return nil }
            frames.append(
                Frame(
                    unclampedDelay: (sequence[kCGImagePropertyHEICSUnclampedDelayTime] as? NSNumber)?.doubleValue,
                    delay: (sequence[kCGImagePropertyHEICSDelayTime] as? NSNumber)?.doubleValue))
        }
        let file = CGImageSourceCopyProperties(source, nil) as? [CFString: Any]
        let loopCount = ((file?[kCGImagePropertyHEICSDictionary] as? [CFString: Any])?[kCGImagePropertyHEICSLoopCount] as? NSNumber)?
            .intValue
        self.init(frames: frames, loopCount: loopCount)
    }
}
#endif
