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
/// buffer's serial queue, off the main thread, and every frame leaves it as a bitmap that owns
/// its pixels (`AnimationFrameHandoff`): never an image still reading the shared source.
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
        let dynamicRange = (decoder.backend as? ImageIODecoding)?.dynamicRange ?? .standard
        let source = FrameSource(data: data, maximumPixelDimension: maximumPixelDimension, dynamicRange: dynamicRange)
        buffer = AnimationFrameBuffer(frameCount: frameCount, byteLimit: byteLimit, queue: .global(qos: .userInitiated)) { index in
            guard let frame = source.decodeFrame(index) else { return nil }
            let decoded = DecodedImage(
                format: nil, bitmap: PlatformBitmap(frame, provenance: .imageSource), frameCount: 1, transformations: [])
            guard let finished = Self.ownedPixels(of: decoder.applyFormat(to: decoded)) else { return nil }
            // Charged as the frame budget counts (`BitmapFootprint`, from the first frame's
            // `decodedByteCount`): bytes per row × rows, padding and 16-bit components included.
            return AnimationFrameBuffer.Decoded(frame: finished, byteCount: BitmapFootprint.byteCount(of: finished))
        }
    }

    /// The frame as a bitmap that owns its pixels (`AnimationFrameHandoff`): drawn into a bitmap
    /// of its own unless a resize or a processor already drew it. `nil` when drawing fails (the
    /// frame is then asked for again later, never handed over tied to the shared source).
    private static func ownedPixels(of frame: DecodedImage) -> CGImage? {
        guard let bitmap = frame.bitmap else { return nil }
        switch AnimationFrameHandoff.action(for: bitmap.provenance, sourceIsShared: true) {
        case .handOver:
            return bitmap.cgImage
        case .copyPixels:
            let size = frame.pixelSize
            let plan = RedrawPlan(canvasSize: size, drawRect: PixelRect(x: 0, y: 0, width: size.width, height: size.height), clip: .none)
            return ProcessorDrawing.redraw(frame, plan)?.cgImage
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
/// at a time, in order, and no image tied to it leaves that queue (`AnimatedFrames.ownedPixels`).
/// `data`, `maximumPixelDimension` and `dynamicRange` are immutable.
private final class FrameSource: @unchecked Sendable {
    private let data: Data
    private let maximumPixelDimension: Int
    private let dynamicRange: ImageDynamicRange
    private var source: CGImageSource?

    init(data: Data, maximumPixelDimension: Int, dynamicRange: ImageDynamicRange) {
        self.data = data
        self.maximumPixelDimension = maximumPixelDimension
        self.dynamicRange = dynamicRange
    }

    /// Frame `index`, composed onto the canvas by ImageIO, oriented, downsampled and decompressed.
    func decodeFrame(_ index: Int) -> CGImage? {
        if source == nil {
            source = CGImageSourceCreateWithData(data as CFData, [kCGImageSourceShouldCache: false] as CFDictionary)
        }
        guard let source else { return nil }
        let options = ImageIODecoding.decodeOptions(maximumPixelDimension: maximumPixelDimension, dynamicRange: dynamicRange)
        return CGImageSourceCreateThumbnailAtIndex(source, index, options)
    }
}
#endif
