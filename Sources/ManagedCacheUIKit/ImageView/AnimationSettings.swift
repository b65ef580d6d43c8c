/// Whether an image view plays animated images, from the three switches that decide it: the
/// app's (the view's `animatesImages` and `ImageAnimation.isEnabled`), the system's Reduce Motion
/// and the system's Animated Images accessibility setting (Settings › Accessibility ›
/// Motion/Display: "Animated Images"; iOS 17, tvOS 17, visionOS 1 and later, where Apple asks apps
/// to pause animated images while it is off). Any one of them off shows the first frame.
///
/// Platform-neutral: the UIKit view reads the switches (and observes their change notifications)
/// and passes them here; this is the one place that combines them.
struct AnimationSettings: Sendable, Hashable {
    /// The app allows animated images: `ImageAnimation.isEnabled` and the view's `animatesImages`.
    var appAllowsAnimation: Bool
    /// The system's Reduce Motion setting is on.
    var reduceMotion: Bool
    /// The system's Animated Images setting is on (`true` on systems without that setting).
    var systemPlaysAnimatedImages: Bool

    /// Whether an animation may play (in a window) under these settings.
    var allowsPlaying: Bool { appAllowsAnimation && systemPlaysAnimatedImages && !reduceMotion }

    /// The playhead's conditions for a view in a window (`isInWindow`) or not: Animated Images off
    /// counts as the app's switch off (the first frame shows, as under Reduce Motion).
    ///
    /// - Parameter isInWindow: Whether the view is in a window.
    /// - Returns: What `AnimationPlayhead` depends on.
    func conditions(isInWindow: Bool) -> AnimationPlayhead.Conditions {
        AnimationPlayhead.Conditions(
            isInWindow: isInWindow, reduceMotion: reduceMotion, animationAllowed: appAllowsAnimation && systemPlaysAnimatedImages)
    }
}
