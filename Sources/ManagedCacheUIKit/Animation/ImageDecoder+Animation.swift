import Foundation

extension ImageDecoder {
    /// The default `animationBufferByteLimit`: 8 MiB of decoded frames per animated image (about
    /// 22 frames of 300 × 300 pixels).
    public static let defaultAnimationBufferByteLimit = 8 << 20

    /// Gives an animated image its timing (read from `data`), its frame-buffer limit and, on
    /// Apple platforms, its frames: decoded on demand at `maximumPixelDimension` and put through
    /// the format like the first frame. Still images are returned as they are.
    func finishAnimation(of decoded: DecodedImage, data: Data, info: ImageInfo, maximumPixelDimension: Int?) -> DecodedImage {
        guard info.frameCount > 1 else { return decoded }
        var image = decoded
        if image.animation == nil { image.animation = AnimationInfo(parsing: data) }
        #if canImport(ImageIO)
        // An animated HEIC (HEICS): its timing is in ImageIO's properties, not parsed here.
        if image.animation == nil, info.format == .heic { image.animation = ImageSequenceTiming(imageIOData: data)?.animation }
        #endif
        guard let animation = image.animation else { return image }
        image.frameBufferByteLimit = AnimationFrameBudget.byteLimit(
            frameByteCount: image.decodedByteCount, frameCount: animation.frameCount, limit: animationBufferByteLimit)
        #if canImport(ImageIO)
        image.animatedFrames = AnimatedFrames(
            data: data, frameCount: animation.frameCount, byteLimit: image.frameBufferByteLimit,
            maximumPixelDimension: maximumPixelDimension ?? max(info.pixelWidth, info.pixelHeight), decoder: self)
        #endif
        return image
    }
}
