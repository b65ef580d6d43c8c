/// How a `ManagedImageView` shows an image that arrives while it shows something else: Haneke's
/// "setting the image and animating the change if appropriate".
///
/// Whether a change is animated is decided by the platform-neutral view core and carried in
/// `ImageViewDisplay.transition`: an image that arrives after the view has shown something for
/// its load (the placeholder, the spinner, nothing, the previous image) fades in: a download, a
/// file-cache read, a decode. A memory hit, delivered inside the call that loads it, is set at
/// once, and so is everything else (placeholders, failures), so reused cells in a fast scroll
/// never flicker. The UIKit view runs the animation, unless Reduce Motion is on.
public enum ImageTransition: Sendable, Hashable {
    /// The image is set at once.
    case none
    /// The shown content cross-dissolves into the image over `duration` seconds.
    case crossDissolve(duration: Double)

    /// The default of `ManagedImageView.transition`: a short cross-fade, 0.25 s.
    public static let fade = ImageTransition.crossDissolve(duration: 0.25)

    /// How long the transition runs, in seconds: 0 for `.none`.
    public var duration: Double {
        switch self {
        case .none: 0
        case .crossDissolve(let duration): max(0, duration)
        }
    }

    /// This transition, or `.none` when the user asked for reduced motion (Reduce Motion on Apple
    /// platforms) or it would last no time.
    ///
    /// - Parameter reducesMotion: Whether the user asked for reduced motion.
    /// - Returns: `.none` or this transition.
    public func respectingReducedMotion(_ reducesMotion: Bool) -> ImageTransition {
        reducesMotion || duration == 0 ? .none : self
    }
}
