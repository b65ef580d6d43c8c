/// Whether a decoded animation frame leaves the decode queue as it is, or as a copy that owns
/// its pixels.
///
/// Every frame of an animation after the first is decoded from one image source the animation
/// shares (`AnimatedFrames`), on the frame buffer's queue. An image made by an image source may
/// keep a reference to it and read its bytes lazily when it is first drawn (ImageIO does from
/// iOS 15): the main thread making a `UIImage` of such a frame, or drawing it, would then read the
/// source while the decode queue reads it for the next frame, and apps have crashed there
/// (`-[UIImage initWithCGImage:scale:orientation:]` → `CGImageGetImageSource`). So a frame is
/// handed over only when it owns its pixels, and copied into a bitmap of its own otherwise:
///
/// | the frame's pixels (`BitmapProvenance`) | source shared with other frames | action |
/// | --- | --- | --- |
/// | `drawn` (a resize or a processor drew it) | any | hand over |
/// | `imageSource` (ImageIO's own image) | yes | copy |
/// | `supplied` (an app's processor made it: may share the source's pixels) | yes | copy |
/// | `imageSource`, `supplied` | no (the first frame: its source was private to one decode) | hand over |
enum AnimationFrameHandoff: Sendable, Equatable {
    /// The frame goes to the views as it is.
    case handOver
    /// The frame is drawn into a bitmap of its own first, on the decode queue.
    case copyPixels

    /// What happens to a frame whose pixels are `provenance`, decoded from a source that other
    /// frames are decoded from (`sourceIsShared`) or from a source of its own.
    static func action(for provenance: BitmapProvenance, sourceIsShared: Bool) -> AnimationFrameHandoff {
        switch provenance {
        case .drawn: .handOver
        case .imageSource, .supplied: sourceIsShared ? .copyPixels : .handOver
        }
    }
}
