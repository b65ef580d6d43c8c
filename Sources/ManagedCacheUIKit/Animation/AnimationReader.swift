import Foundation

/// Reads frame durations and loop counts out of animated image bytes, by format. The bytes have
/// usually been validated already (`ImageValidator`), so a reader only needs to find its way;
/// anything it cannot read makes it give up (`nil`), never guess.
enum AnimationReader {
    /// The animation in `data`, or `nil` for a still image, an unknown format or unreadable bytes.
    static func read(_ data: Data) -> AnimationInfo? {
        guard let format = ImageValidator.detectFormat(data) else { return nil }
        return data.withUnsafeBytes { buffer -> AnimationInfo? in
            let reader = ImageByteReader(bytes: buffer, format: format)
            do {
                let animation: AnimationInfo?
                switch format {
                case .gif: animation = try GIFAnimationReader.read(reader)
                case .png: animation = try PNGAnimationReader.read(reader)
                case .webp: animation = try WebPAnimationReader.read(reader)
                case .jpeg, .heic, .avif, .tiff, .other: animation = nil
                }
                guard let animation, animation.frameCount > 1 else { return nil }
                return animation
            } catch {
                return nil
            }
        }
    }
}
