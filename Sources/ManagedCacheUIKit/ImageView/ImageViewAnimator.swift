#if canImport(UIKit) && !os(watchOS)
import Accessibility
import Foundation
import QuartzCore
import UIKit

/// Plays an animated image in a `ManagedImageView`'s image view.
///
/// Every decision is platform-neutral and tested on Linux: whether it may play is
/// `AnimationSettings`' (the app's switch, Reduce Motion, the system's Animated Images setting),
/// which frame shows is `AnimationPlayhead`'s, and the refresh rate it needs is
/// `AnimationFrameRate`'s. This class feeds the playhead screen refreshes from the
/// `SharedDisplayLink` (subscribed only while the playhead wants refreshes: in a window, allowed
/// to play, not finished) and shows the frame it names from the image's shared `AnimatedFrames`
/// buffer. A frame not decoded yet is asked for (it is decoded off the main thread) and the
/// current one stays until it is there; the next frame is asked for ahead of time. Frame 0 is the
/// image's own bitmap.
@MainActor
final class ImageViewAnimator {
    /// The animation being shown.
    private struct Playing {
        let image: DecodedImage
        let frames: AnimatedFrames
        let firstFrame: CGImage
        var playhead: AnimationPlayhead
        var displayedIndex = 0
        /// The refresh rate its frame durations need.
        let refreshRate: Int
    }

    private weak var imageView: UIImageView?
    private var playing: Playing?
    private var isSubscribed = false
    private var isInWindow = false
    private var scale: CGFloat = 1
    private let observers = NotificationObservers()

    /// Whether this view plays animations (with `ImageAnimation.isEnabled`, Reduce Motion off and
    /// Animated Images on).
    var animatesImages = true {
        didSet { refreshConditions() }
    }

    init(imageView: UIImageView) {
        self.imageView = imageView
        var names = [UIAccessibility.reduceMotionStatusDidChangeNotification, ImageAnimation.settingDidChangeNotification]
        if let name = SystemAnimatedImagesSetting.didChangeNotification { names.append(name) }
        for name in names {
            observers.observe(name) { [weak self] in self?.refreshConditions() }
        }
    }

    /// The view (in a window or not) now shows `image` (already set on the image view, as its
    /// first frame) at `scale`. An animation starts from its first frame, unless it is the one
    /// already playing.
    func show(_ image: DecodedImage?, scale: CGFloat, inWindow: Bool) {
        self.scale = scale
        isInWindow = inWindow
        guard let image, let animation = image.animation, let frames = image.animatedFrames, let first = image.cgImage else {
            stop()
            return
        }
        if let playing, playing.frames === frames { return }
        let playhead = AnimationPlayhead(animation: animation, conditions: conditions, time: CACurrentMediaTime())
        playing = Playing(
            image: image, frames: frames, firstFrame: first, playhead: playhead,
            refreshRate: AnimationFrameRate.rate(for: animation))
        frames.buffer.prefetch(1)
        updateSubscription()
    }

    /// Whether `image` is the animation playing now (the image view shows one of its frames).
    func isPlaying(_ image: DecodedImage?) -> Bool {
        guard let playing, let frames = image?.animatedFrames else { return false }
        return playing.frames === frames
    }

    /// The view moved into or out of a window: playing resumes or stops.
    func viewMovedToWindow(_ inWindow: Bool) {
        isInWindow = inWindow
        refreshConditions()
    }

    // MARK: - Private

    private var conditions: AnimationPlayhead.Conditions {
        AnimationSettings(
            appAllowsAnimation: animatesImages && ImageAnimation.isEnabled, reduceMotion: UIAccessibility.isReduceMotionEnabled,
            systemPlaysAnimatedImages: SystemAnimatedImagesSetting.isOn
        ).conditions(isInWindow: isInWindow)
    }

    private func refreshConditions() {
        guard var current = playing else { return }
        current.playhead.update(conditions, at: CACurrentMediaTime())
        playing = current
        show(frame: current.playhead.frameIndex)
        updateSubscription()
    }

    private func stop() {
        playing = nil
        updateSubscription()
    }

    /// Receives refreshes from the shared display link exactly while the playhead wants them, at
    /// the rate its animation needs.
    private func updateSubscription() {
        if let playing, playing.playhead.wantsRefreshes {
            SharedDisplayLink.shared.subscribe(self, rate: playing.refreshRate)
            isSubscribed = true
        } else if isSubscribed {
            SharedDisplayLink.shared.unsubscribe(self)
            isSubscribed = false
        }
    }

    /// A screen refresh that shows at `targetTimestamp`: the frame due then.
    fileprivate func step(at targetTimestamp: CFTimeInterval) {
        guard var current = playing else {
            updateSubscription()
            return
        }
        let tick = current.playhead.tick(at: targetTimestamp)
        playing = current
        show(frame: tick.frameIndex)
        if !current.playhead.wantsRefreshes { updateSubscription() }
    }

    /// Shows frame `index` if it is decoded (asking for it otherwise), and asks for the next one.
    private func show(frame index: Int) {
        guard var current = playing, index != current.displayedIndex else { return }
        let frame = index == 0 ? current.firstFrame : current.frames.buffer.frame(at: index)
        guard let frame else { return }  // decoding; the current frame stays until the next refresh
        imageView?.image = UIImage(cgImage: frame, scale: scale, orientation: .up)
        current.displayedIndex = index
        playing = current
        let next = (index + 1) % current.frames.buffer.frameCount
        if next != 0 { current.frames.buffer.prefetch(next) }
    }
}

/// One `CADisplayLink` for every animated image view on screen: a feed of 30 GIFs wakes the main
/// thread once per refresh, not 30 times, and the link runs only while some view plays. It asks
/// for the rate the playing animations need together (`AnimationFrameRate.sharedRate`), through
/// `preferredFrameRateRange` (iOS 15, tvOS 15, visionOS 1: the deployment targets), instead of
/// the display's full rate: a 10 fps GIF alone refreshes at 10 Hz.
///
/// Animators are held weakly; one that is gone is dropped at the next refresh.
@MainActor
private final class SharedDisplayLink {
    static let shared = SharedDisplayLink()

    private struct Subscriber {
        weak var animator: ImageViewAnimator?
        var rate: Int
    }

    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    private var link: CADisplayLink?
    /// The rate the link was last asked for.
    private var appliedRate: Int?

    /// `animator` receives every refresh from now on, and needs `rate` refreshes a second.
    func subscribe(_ animator: ImageViewAnimator, rate: Int) {
        subscribers[ObjectIdentifier(animator)] = Subscriber(animator: animator, rate: rate)
        update()
    }

    /// `animator` receives no more refreshes.
    func unsubscribe(_ animator: ImageViewAnimator) {
        subscribers[ObjectIdentifier(animator)] = nil
        update()
    }

    /// Runs the link while anyone is subscribed, at the rate they need together.
    private func update() {
        subscribers = subscribers.filter { $0.value.animator != nil }
        guard let rate = AnimationFrameRate.sharedRate(subscribers.values.map(\.rate)) else {
            link?.invalidate()
            link = nil
            appliedRate = nil
            return
        }
        let current: CADisplayLink
        if let link {
            current = link
        } else {
            let target = DisplayLinkTarget(self)
            current = CADisplayLink(target: target, selector: #selector(DisplayLinkTarget.step))
            target.link = current
            current.add(to: .main, forMode: .common)
            link = current
        }
        guard rate != appliedRate else { return }
        let range = AnimationFrameRate.range(for: rate)
        current.preferredFrameRateRange = CAFrameRateRange(minimum: range.minimum, maximum: range.maximum, preferred: range.preferred)
        appliedRate = rate
    }

    /// A refresh: every subscriber shows the frame due when it reaches the screen.
    fileprivate func step(_ link: CADisplayLink) {
        let targetTimestamp = link.targetTimestamp
        for subscriber in Array(subscribers.values) {
            subscriber.animator?.step(at: targetTimestamp)
        }
        if subscribers.values.contains(where: { $0.animator == nil }) { update() }
    }
}

/// The display link's target: it holds the shared link weakly (a display link retains its
/// target).
///
/// `step()` takes no sender: the display link passes itself, which a method without arguments
/// ignores (the usual Swift form), and the target knows its link anyway.
@MainActor
private final class DisplayLinkTarget: NSObject {
    private weak var owner: SharedDisplayLink?
    /// The link that calls this target (the run loop holds it).
    weak var link: CADisplayLink?

    init(_ owner: SharedDisplayLink) {
        self.owner = owner
    }

    @objc func step() {
        guard let link else { return }
        guard let owner else {
            link.invalidate()
            return
        }
        owner.step(link)
    }
}

/// The system's Animated Images accessibility setting (Accessibility framework), as each system
/// spells it: `AccessibilitySettings.animatedImagesEnabled` and its change notification from
/// iOS 18 / tvOS 18 / visionOS 2; `AXAnimatedImagesEnabled()` and
/// `Notification.Name.AXAnimatedImagesEnabledDidChange` from iOS 17 / tvOS 17 / visionOS 1 (the
/// same setting, renamed in 18). Earlier systems expose no such setting: animated images count as
/// on there. visionOS is left to `*` in the second check: its first release has the function.
@MainActor
enum SystemAnimatedImagesSetting {
    /// Whether the system lets animated images play.
    static var isOn: Bool {
        if #available(iOS 18.0, tvOS 18.0, visionOS 2.0, *) {  // portability-lint: allow checked here
            return AccessibilitySettings.animatedImagesEnabled  // portability-lint: allow inside #available
        } else if #available(iOS 17.0, tvOS 17.0, *) {
            return AXAnimatedImagesEnabled()
        }
        return true
    }

    /// Posted when the setting changes; `nil` where the system has none.
    static var didChangeNotification: Notification.Name? {
        if #available(iOS 18.0, tvOS 18.0, visionOS 2.0, *) {  // portability-lint: allow checked here
            return AccessibilitySettings.animatedImagesEnabledDidChangeNotification  // portability-lint: allow inside #available
        } else if #available(iOS 17.0, tvOS 17.0, *) {
            return .AXAnimatedImagesEnabledDidChange
        }
        return nil
    }
}

/// Block-based notification observers, removed when this object goes (with the animator that
/// holds it). The blocks run on the main queue.
private final class NotificationObservers {
    private var tokens: [any NSObjectProtocol] = []

    func observe(_ name: Notification.Name, _ action: @escaping @MainActor () -> Void) {
        tokens.append(
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: .main) { _ in
                MainActor.assumeIsolated { action() }
            })
    }

    deinit {
        for token in tokens { NotificationCenter.default.removeObserver(token) }
    }
}
#endif
