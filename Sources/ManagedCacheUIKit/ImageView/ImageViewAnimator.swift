#if canImport(UIKit) && !os(watchOS)
import Foundation
import QuartzCore
import UIKit

/// Plays an animated image in a `ManagedImageView`'s image view: the UIKit side of issue 18.3.
///
/// Every decision is `AnimationPlayhead`'s (platform-neutral, tested on Linux): this class feeds
/// it screen refreshes from a `CADisplayLink` (running only while the playhead wants refreshes:
/// in a window, animation allowed, Reduce Motion off, not finished) and shows the frame it names
/// from the image's shared `AnimatedFrames` buffer. A frame not decoded yet is asked for (it is
/// decoded off the main thread) and the current one stays until it is there; the next frame is
/// asked for ahead of time. Frame 0 is the image's own bitmap.
@MainActor
final class ImageViewAnimator {
    /// The animation being shown.
    private struct Playing {
        let image: DecodedImage
        let frames: AnimatedFrames
        let firstFrame: CGImage
        var playhead: AnimationPlayhead
        var displayedIndex = 0
    }

    private weak var imageView: UIImageView?
    private var playing: Playing?
    private var displayLink: CADisplayLink?
    private var isInWindow = false
    private var scale: CGFloat = 1
    private let observers = NotificationObservers()

    /// Whether this view plays animations (with `ImageAnimation.isEnabled` and Reduce Motion off).
    var animatesImages = true {
        didSet { refreshConditions() }
    }

    init(imageView: UIImageView) {
        self.imageView = imageView
        for name in [UIAccessibility.reduceMotionStatusDidChangeNotification, ImageAnimation.settingDidChangeNotification] {
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
        playing = Playing(image: image, frames: frames, firstFrame: first, playhead: playhead)
        frames.buffer.prefetch(1)
        updateDisplayLink()
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
        AnimationPlayhead.Conditions(
            isInWindow: isInWindow, reduceMotion: UIAccessibility.isReduceMotionEnabled,
            animationAllowed: animatesImages && ImageAnimation.isEnabled)
    }

    private func refreshConditions() {
        guard var current = playing else { return }
        current.playhead.update(conditions, at: CACurrentMediaTime())
        playing = current
        show(frame: current.playhead.frameIndex)
        updateDisplayLink()
    }

    private func stop() {
        playing = nil
        updateDisplayLink()
    }

    /// Runs the display link exactly while the playhead wants refreshes.
    private func updateDisplayLink() {
        let wanted = playing?.playhead.wantsRefreshes ?? false
        if wanted, displayLink == nil {
            let target = DisplayLinkTarget(self)
            let link = CADisplayLink(target: target, selector: #selector(DisplayLinkTarget.step))
            target.link = link
            link.add(to: .main, forMode: .common)
            displayLink = link
        } else if !wanted, let link = displayLink {
            link.invalidate()
            displayLink = nil
        }
    }

    /// A screen refresh from `link`: the frame due when it shows.
    fileprivate func step(_ link: CADisplayLink) {
        guard var current = playing else {
            updateDisplayLink()
            return
        }
        let tick = current.playhead.tick(at: link.targetTimestamp)
        playing = current
        show(frame: tick.frameIndex)
        if !current.playhead.wantsRefreshes { updateDisplayLink() }
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

/// The display link's target: it holds the animator weakly (a display link retains its target),
/// and ends the link once the animator is gone.
///
/// `step()` takes no sender: the display link passes itself, which a method without arguments
/// ignores (the usual Swift form), and the target knows its link anyway.
@MainActor
private final class DisplayLinkTarget: NSObject {
    private weak var animator: ImageViewAnimator?
    /// The link that calls this target (the run loop holds it).
    weak var link: CADisplayLink?

    init(_ animator: ImageViewAnimator) {
        self.animator = animator
    }

    @objc func step() {
        guard let link else { return }
        guard let animator else {
            link.invalidate()
            return
        }
        animator.step(link)
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
