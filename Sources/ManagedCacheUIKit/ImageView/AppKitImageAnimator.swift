#if canImport(AppKit) && !canImport(UIKit)
import Accessibility
import AppKit

/// Plays an animated image in the macOS `ManagedImageView`'s image layer.
///
/// Every decision is platform-neutral and tested on Linux: whether it may play is
/// `AnimationSettings`' (the app's switch, Reduce Motion), which frame shows and which is asked
/// for next is `AnimationPlayback`'s, and the refresh rate it needs is `AnimationFrameRate`'s.
/// This class feeds the playback refreshes from the `SharedAnimationTimer` (subscribed only while
/// the playback wants them: in a window, allowed to play, not finished) and puts the frame it
/// returns in the layer.
@MainActor
final class AppKitImageAnimator {
    private weak var imageView: NSView?
    private var playback: AnimationPlayback<CGImage>?
    private var isInWindow = false
    private var isSubscribed = false

    /// Whether this view plays animations (with `ImageAnimation.isEnabled` and Reduce Motion off).
    var animatesImages = true {
        didSet { refreshConditions() }
    }

    init(imageView: NSView) {
        self.imageView = imageView
    }

    /// The view (in a window or not) now shows `image` (already in the layer as its first frame).
    /// An animation starts from its first frame, unless it is the one already playing.
    func show(_ image: DecodedImage?, inWindow: Bool) {
        isInWindow = inWindow
        guard let image, let animation = image.animation, let frames = image.animatedFrames, let first = image.cgImage else {
            playback = nil
            updateSubscription()
            return
        }
        if let playback, playback.buffer === frames.buffer { return }
        playback = AnimationPlayback(
            animation: animation, buffer: frames.buffer, firstFrame: first, conditions: conditions, time: CACurrentMediaTime())
        updateSubscription()
    }

    /// Whether `image` is the animation playing now (the layer shows one of its frames).
    func isPlaying(_ image: DecodedImage?) -> Bool {
        guard let playback, let frames = image?.animatedFrames else { return false }
        return playback.buffer === frames.buffer
    }

    /// The view moved into or out of a window: playing resumes or stops.
    func viewMovedToWindow(_ inWindow: Bool) {
        isInWindow = inWindow
        refreshConditions()
    }

    /// A setting changed (Reduce Motion, the app's switch): playing resumes or stops.
    func refreshConditions() {
        guard var current = playback else { return }
        let frame = current.update(conditions, at: CACurrentMediaTime())
        playback = current
        imageView?.layer?.contents = frame
        updateSubscription()
    }

    private var conditions: AnimationPlayhead.Conditions {
        AnimationSettings(
            appAllowsAnimation: animatesImages && ImageAnimation.isEnabled, reduceMotion: ReduceMotionObserver.isOn,
            systemPlaysAnimatedImages: SystemAnimatedImages.isOn
        ).conditions(isInWindow: isInWindow)
    }

    private func updateSubscription() {
        if let playback, playback.wantsRefreshes {
            SharedAnimationTimer.shared.subscribe(self, rate: playback.refreshRate)
            isSubscribed = true
        } else if isSubscribed {
            SharedAnimationTimer.shared.unsubscribe(self)
            isSubscribed = false
        }
    }

    /// A refresh at `time`: the frame due, if decoded.
    fileprivate func step(at time: CFTimeInterval) {
        guard var current = playback else {
            updateSubscription()
            return
        }
        let frame = current.refresh(at: time)
        playback = current
        imageView?.layer?.contents = frame
        if !current.wantsRefreshes { updateSubscription() }
    }
}

/// The system's Animated Images setting on macOS (`AccessibilitySettings.animatedImagesEnabled`
/// and its change notification, macOS 15); on earlier systems animated images count as allowed.
@MainActor
enum SystemAnimatedImages {
    /// Whether the system lets animated images play.
    static var isOn: Bool {
        if #available(macOS 15.0, *) {  // portability-lint: allow checked here
            return AccessibilitySettings.animatedImagesEnabled  // portability-lint: allow inside #available
        }
        return true
    }

    /// Posted when the setting changes; `nil` where the system has none.
    static var didChangeNotification: Notification.Name? {
        if #available(macOS 15.0, *) {  // portability-lint: allow checked here
            return AccessibilitySettings.animatedImagesEnabledDidChangeNotification  // portability-lint: allow inside #available
        }
        return nil
    }
}

/// One main-run-loop timer for every animated macOS image view: a window of 30 GIFs wakes the
/// main thread once per tick, not 30 times, at the rate the playing animations need together
/// (`AnimationFrameRate.sharedRate`), and only while some view plays. A `Timer` rather than a
/// display link: `NSView.displayLink(target:selector:)` needs macOS 14 and the package supports
/// macOS 12. Animators are held weakly.
@MainActor
private final class SharedAnimationTimer {
    static let shared = SharedAnimationTimer()

    private struct Subscriber {
        weak var animator: AppKitImageAnimator?
        var rate: Int
    }

    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    private var timer: Timer?
    private var appliedRate: Int?

    func subscribe(_ animator: AppKitImageAnimator, rate: Int) {
        subscribers[ObjectIdentifier(animator)] = Subscriber(animator: animator, rate: rate)
        update()
    }

    func unsubscribe(_ animator: AppKitImageAnimator) {
        subscribers[ObjectIdentifier(animator)] = nil
        update()
    }

    /// Runs the timer while anyone is subscribed, at the rate they need together.
    private func update() {
        subscribers = subscribers.filter { $0.value.animator != nil }
        guard let rate = AnimationFrameRate.sharedRate(subscribers.values.map(\.rate)) else {
            timer?.invalidate()
            timer = nil
            appliedRate = nil
            return
        }
        guard rate != appliedRate else { return }
        timer?.invalidate()
        let interval = 1 / Double(rate)
        let timer = Timer(timeInterval: interval, repeats: true) { [weak self] _ in
            // Added to the main run loop below: it fires on the main thread.
            MainActor.assumeIsolated { self?.tick() }
        }
        timer.tolerance = interval / 10
        RunLoop.main.add(timer, forMode: .common)
        self.timer = timer
        appliedRate = rate
    }

    private func tick() {
        let now = CACurrentMediaTime()
        for subscriber in Array(subscribers.values) {
            subscriber.animator?.step(at: now)
        }
        if subscribers.values.contains(where: { $0.animator == nil }) { update() }
    }
}
#endif
