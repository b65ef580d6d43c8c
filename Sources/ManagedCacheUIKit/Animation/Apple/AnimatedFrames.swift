#if canImport(ImageIO)
import CoreGraphics
import Foundation
import ImageIO

/// The frames of one animated image on Apple platforms, shared by every view that shows it (it
/// lives in the shared `DecodedImage`): the encoded bytes, and an `AnimationFrameBuffer` of
/// frames ImageIO decodes on demand, downsampled like the first frame and put through the same
/// format (`ImageDecoder.applyFormat`), within the image's `frameBufferByteLimit`.
///
/// Frame 0 is the image's own bitmap; the buffer decodes the others. Decoding runs on the
/// buffer's serial queue, off the main thread.
final class AnimatedFrames: Sendable, Equatable {
    /// The buffer of decoded frames (frame 0 included when a view asks for it by index).
    let buffer: AnimationFrameBuffer<CGImage>
    /// The encoded file, kept for decoding frames (its bytes are small beside the frames').
    let data: Data
    /// The longer side frames are decoded at.
    let maximumPixelDimension: Int

    /// Frames of `data` (an animation of `frameCount` frames), decoded at `maximumPixelDimension`
    /// and finished by `decoder`'s format, at most `byteLimit` bytes of them kept.
    init(data: Data, frameCount: Int, byteLimit: Int, maximumPixelDimension: Int, decoder: ImageDecoder) {
        self.data = data
        self.maximumPixelDimension = maximumPixelDimension
        let source = FrameSource(data: data, maximumPixelDimension: maximumPixelDimension)
        buffer = AnimationFrameBuffer(frameCount: frameCount, byteLimit: byteLimit, queue: .global(qos: .userInitiated)) { index in
            guard let frame = source.decodeFrame(index) else { return nil }
            let finished = decoder.applyFormat(to: DecodedImage(cgImage: frame)).cgImage ?? frame
            // Charged as the frame budget counts (`BitmapFootprint`, from the first frame's
            // `decodedByteCount`): bytes per row × rows, padding and 16-bit components included.
            return AnimationFrameBuffer.Decoded(frame: finished, byteCount: BitmapFootprint.byteCount(of: finished))
        }
    }

    /// Identity: the frames of one decoded image (shared by every copy of it). Like its bitmap
    /// (`BitmapBox`), never compared by content: comparing the encoded bytes would read a whole
    /// file on the main thread, where image views compare images.
    static func == (lhs: AnimatedFrames, rhs: AnimatedFrames) -> Bool {
        lhs === rhs
    }
}

/// The ImageIO source frames are decoded from, made on first use.
///
/// `@unchecked Sendable` is safe here: `decodeFrame` is only ever called by one
/// `AnimationFrameBuffer`'s decode closure, which runs on that buffer's serial queue, one decode at
/// a time; so the mutable `source` (a `CGImageSource`, not Sendable) is only touched by one thread
/// at a time, in order. `data` and `maximumPixelDimension` are immutable.
private final class FrameSource: @unchecked Sendable {
    private let data: Data
    private let maximumPixelDimension: Int
    private var source: CGImageSource?

    init(data: Data, maximumPixelDimension: Int) {
        self.data = data
        self.maximumPixelDimension = maximumPixelDimension
    }

    /// Frame `index`, composed onto the canvas by ImageIO, oriented, downsampled and decompressed.
    func decodeFrame(_ index: Int) -> CGImage? {
        if source == nil {
            source = CGImageSourceCreateWithData(data as CFData, [kCGImageSourceShouldCache: false] as CFDictionary)
        }
        guard let source else { return nil }
        let options: [CFString: Any] = [
            kCGImageSourceCreateThumbnailFromImageAlways: true,
            kCGImageSourceCreateThumbnailWithTransform: true,
            kCGImageSourceShouldCacheImmediately: true,
            kCGImageSourceThumbnailMaxPixelSize: max(1, maximumPixelDimension),
        ]
        return CGImageSourceCreateThumbnailAtIndex(source, index, options as CFDictionary)
    }
}
#endif
