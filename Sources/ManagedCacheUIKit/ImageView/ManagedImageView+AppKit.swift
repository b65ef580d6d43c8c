#if canImport(AppKit) && !canImport(UIKit)
import AppKit
import ManagedCache

/// An `NSView` that shows the image at a URL, managed by an `ObjectManager`: the macOS
/// `ManagedImageView`, with the UIKit view's API and behaviour. Usable from code
/// (`init(frame:)`) and Interface Builder (`init(coder:)`). (The snippet is macOS-only; the same
/// calls are type-checked against the AppKit stand-ins in `AppleSurface/SampleApp/MacPhotoView.swift`.)
///
/// ```swift no-check
/// final class PhotoItem: NSCollectionViewItem {
///     let photoView = ManagedImageView()
///
///     func configure(photoURL: URL) {
///         photoView.load(url: photoURL)
///     }
///
///     override func prepareForReuse() {
///         super.prepareForReuse()
///         photoView.clear()  // the old image is never shown again
///     }
/// }
/// ```
///
/// A thin shell over the platform-independent core the UIKit and headless views share (tested on
/// Linux): it draws the core's display into a layer (`contentsGravity` from ``scaleMode``), a
/// spinning `NSProgressIndicator` while loading, and forwards clicks. Without a `format`, images
/// are decoded downsampled to the view's size in pixels (its window's `backingScaleFactor`) once
/// it has a size and a window; another variant loads when the size or the backing scale changes
/// enough (a window resized or moved to another display), and the image on screen stays until
/// that variant replaces it. An image that had to be loaded cross-fades in (`transition`), not
/// while the system's Reduce Motion is on; a memory hit is set at once.
///
/// Animated GIF, APNG and WebP images play while the view is in a window, ``animatesImages`` and
/// ``ImageAnimation/isEnabled`` are on and Reduce Motion is off, frames from the image's buffer
/// shared with every other view showing it, each view with its own playhead, refreshed by one
/// main-run-loop timer shared by every animated view at the rate their animations need.
@MainActor
public final class ManagedImageView: NSView, ManagedObjectUser {
    /// The platform-independent core every decision is made in (the forwarded properties are in
    /// `ManagedImageView+Configuration.swift`).
    nonisolated let model: ImageViewModel
    /// A layer-backed subview whose layer shows the image (`contents`), so that the spinner can
    /// be a subview beside it.
    private let imageView = ImageLayerView()
    private let activityIndicator = NSProgressIndicator()

    /// Called when the current URL's image is displayed, with where it came from.
    public var onImageSet: ((DecodedImage, DataOrigin) -> Void)?
    /// Called when the current URL fails, with the reason.
    public var onFailure: ((ManagedCacheError) -> Void)?
    /// Called when the manager cancels the current load (its loading buffer pushed it out).
    public var onCancelled: ((ManagedCacheError.CancellationReason) -> Void)?
    /// Called when bytes of the current URL arrive.
    public var onProgress: ((LoadProgress) -> Void)?
    /// Called when the view is clicked. The view listens for clicks only while this or a
    /// delegate is set.
    public var onTap: (() -> Void)? {
        didSet { updateClickRecognizer() }
    }
    /// Told everything the closures are told. Held weakly.
    public weak var delegate: (any ManagedImageViewDelegate)? {
        didSet { updateClickRecognizer() }
    }
    /// How images fill the view (default `.aspectFill`); also the scale mode of the view's
    /// default format.
    public var scaleMode = ImageScaleMode.aspectFill {
        didSet {
            imageView.layer?.contentsGravity = Self.gravity(scaleMode)
            if scaleMode != oldValue { manageIfLayoutMatters(force: true) }
        }
    }
    private var clickRecognizer: NSClickGestureRecognizer?
    private let sizing = LayoutSizing()
    /// The pixel size the current load asked for; `nil` with an explicit format or nothing loaded.
    private var requestedPixelSize: PixelSize?
    /// `manage()` was called before the view had a size and a window: the first layout loads.
    private var waitsForLayout = false
    private lazy var animator = AppKitImageAnimator(imageView: imageView)
    private var reduceMotionObserver: ReduceMotionObserver?

    /// Creates a view managed by ``ManagedCache/ObjectManager/defaultImageManager``.
    ///
    /// - Parameter frameRect: The view's frame.
    public override init(frame frameRect: NSRect) {
        model = ImageViewModel(manager: .defaultImageManager, drainsOnMainThread: true, scheduleQueue: .main)
        super.init(frame: frameRect)
        setUp()
    }

    /// Creates a view managed by a manager of the app's choosing. The default manager is never
    /// created for it.
    ///
    /// - Parameters:
    ///   - frame: The view's frame. Default `.zero` (Auto Layout sizes it).
    ///   - manager: The manager that loads and caches its images.
    public init(frame: NSRect = .zero, manager: ObjectManager) {
        model = ImageViewModel(manager: manager, drainsOnMainThread: true, scheduleQueue: .main)
        super.init(frame: frame)
        setUp()
    }

    /// Creates a view from a storyboard or nib, managed by ``ManagedCache/ObjectManager/defaultImageManager``.
    ///
    /// - Parameter coder: The unarchiver.
    public required init?(coder: NSCoder) {
        model = ImageViewModel(manager: .defaultImageManager, drainsOnMainThread: true, scheduleQueue: .main)
        super.init(coder: coder)
        setUp()
    }

    private func setUp() {
        // One accessibility element with the image role; the app sets the label (what the
        // picture shows), the view keeps the value (loading, failed).
        setAccessibilityElement(true)
        setAccessibilityRole(.image)
        imageView.wantsLayer = true
        imageView.frame = bounds
        imageView.autoresizingMask = [.width, .height]
        imageView.layer?.contentsGravity = Self.gravity(scaleMode)
        imageView.layer?.masksToBounds = true
        addSubview(imageView)
        activityIndicator.style = .spinning
        activityIndicator.controlSize = .small
        activityIndicator.isIndeterminate = true
        activityIndicator.isDisplayedWhenStopped = false
        activityIndicator.autoresizingMask = [.minXMargin, .maxXMargin, .minYMargin, .maxYMargin]
        addSubview(activityIndicator)
        // The core drains on the main thread only (`drainsOnMainThread`), so this is main-isolated.
        model.bind(host: self) { [weak self] event in
            MainActor.assumeIsolated { self?.handle(event) }
        }
        reduceMotionObserver = ReduceMotionObserver { [weak self] in self?.animator.refreshConditions() }
    }

    // MARK: - Loading

    /// Loads the current `url`. A memory hit is displayed before this returns, with no
    /// placeholder first. Without a `format`, the image is decoded at the view's pixel size: a
    /// view without a size or a window yet waits for them instead of decoding at full size.
    public func manage() {
        guard format == nil else {
            requestedPixelSize = nil
            waitsForLayout = false
            model.manage(fallbackFormat: nil)
            return
        }
        guard let size = laidOutPixelSize() else {
            waitsForLayout = true
            return
        }
        waitsForLayout = false
        requestedPixelSize = size
        model.manage(fallbackFormat: sizing.format(for: size, scaleMode: scaleMode))
    }

    /// Centres the spinner; loads the waiting URL once the view has a size, and the right variant
    /// when the size changes enough.
    public override func layout() {
        super.layout()
        activityIndicator.frame = CGRect(x: bounds.midX - 8, y: bounds.midY - 8, width: 16, height: 16)
        manageIfLayoutMatters(force: false)
    }

    /// A view added to a window learns its backing scale and plays its animation; out of a window
    /// the animation stops.
    public override func viewDidMoveToWindow() {
        super.viewDidMoveToWindow()
        imageView.layer?.contentsScale = backingScale
        animator.viewMovedToWindow(window != nil)
        manageIfLayoutMatters(force: false)
    }

    /// The window moved to a display of another scale: the layer and the variant follow.
    public override func viewDidChangeBackingProperties() {
        super.viewDidChangeBackingProperties()
        imageView.layer?.contentsScale = backingScale
        manageIfLayoutMatters(force: false)
    }

    /// Whether this view plays animated GIF, APNG and WebP images. Default `true`. They play only
    /// while the view is in a window, `ImageAnimation.isEnabled` is on and the system's Reduce
    /// Motion is off; otherwise the first frame shows.
    public var animatesImages: Bool {
        get { animator.animatesImages }
        set { animator.animatesImages = newValue }
    }

    /// Detaches from the manager, forgets `url` and `oid` and shows the placeholder (or nothing):
    /// call it in `prepareForReuse`. Nothing of the previous URL is shown again.
    public func clear() {
        waitsForLayout = false
        requestedPixelSize = nil
        model.clear()
    }

    /// Shows `image`, which the app already has, and stores it under `oid`: shown at once with no
    /// transition, stored as the oid's original and, for the view's variant (its `format` and
    /// `processors`, or its size once it has one), made in the background.
    ///
    /// - Parameters:
    ///   - image: The image to show and store.
    ///   - oid: The key it is stored under.
    ///   - url: Where it can be loaded from again, if anywhere (default `nil`: found in the caches only).
    ///   - toFileCache: Whether the file cache keeps it too (default `false`).
    public func setImage(_ image: DecodedImage, oid: String, url: URL? = nil, toFileCache: Bool = false) {
        waitsForLayout = false
        requestedPixelSize = format == nil ? laidOutPixelSize() : nil
        let fallbackFormat = requestedPixelSize.map { sizing.format(for: $0, scaleMode: scaleMode) }
        model.setImage(image, oid: oid, url: url, toFileCache: toFileCache, fallbackFormat: fallbackFormat)
    }

    /// Loads a URL after a delay unless the view is cleared, loaded or given another URL first.
    ///
    /// - Parameters:
    ///   - url: The image's URL.
    ///   - delay: Seconds to wait before loading.
    public func loadFromURL(_ url: URL, afterDelay delay: TimeInterval) {
        let fallbackFormat = laidOutPixelSize().map { sizing.format(for: $0, scaleMode: scaleMode) }
        model.load(url, afterDelay: delay, fallbackFormat: fallbackFormat)
    }

    /// Always `.mainQueue`.
    nonisolated public var callbackDelivery: CallbackDelivery { .mainQueue }

    // MARK: - Rendering

    private func handle(_ event: ImageViewEvent) {
        guard let display = notify(event) else { return }
        let visible = display.content.visibleImage
        // An animation already playing keeps the frame it shows.
        if !animator.isPlaying(visible) {
            imageView.layer?.removeAllAnimations()  // a fade still running must not show the previous image
            let transition = display.transition.respectingReducedMotion(ReduceMotionObserver.isOn)
            if transition != .none {
                let fade = CATransition()
                fade.type = .fade
                fade.duration = transition.duration
                imageView.layer?.add(fade, forKey: "contents")
            }
            imageView.layer?.contents = visible?.cgImage
        }
        animator.show(visible, inWindow: window != nil)
        setAccessibilityValue(display.accessibilityValue)
        if display.isActivityIndicatorVisible {
            activityIndicator.startAnimation(nil)
        } else {
            activityIndicator.stopAnimation(nil)
        }
    }

    /// Installs the click recognizer while something wants clicks, and removes it when nothing does.
    private func updateClickRecognizer() {
        let needed = TapRecognition.isNeeded(hasTapHandler: onTap != nil, hasDelegate: delegate != nil)
        if needed, clickRecognizer == nil {
            let recognizer = NSClickGestureRecognizer(target: self, action: #selector(handleClick))
            addGestureRecognizer(recognizer)
            clickRecognizer = recognizer
        } else if !needed, let recognizer = clickRecognizer {
            removeGestureRecognizer(recognizer)
            clickRecognizer = nil
        }
    }

    @objc private func handleClick() {
        onTap?()
        delegate?.managedImageViewWasTapped(self)
    }

    /// The window's backing scale (1 until the view is in a window).
    private var backingScale: CGFloat { window?.backingScaleFactor ?? 1 }

    /// The view's size in pixels, once it has a size and a window (whose backing scale it needs).
    private func laidOutPixelSize() -> PixelSize? {
        guard let window else { return nil }
        return sizing.pixelSize(width: Double(bounds.width), height: Double(bounds.height), scale: Double(window.backingScaleFactor))
    }

    private func manageIfLayoutMatters(force: Bool) {
        guard url != nil, format == nil, let size = laidOutPixelSize() else { return }
        if force || waitsForLayout || sizing.needsNewVariant(current: requestedPixelSize, new: size) { manage() }
    }

    private static func gravity(_ mode: ImageScaleMode) -> CALayerContentsGravity {
        switch mode {
        case .fill: return .resize
        case .aspectFit: return .resizeAspect
        case .aspectFill: return .resizeAspectFill
        }
    }
}

/// A view whose layer's contents are set by the image view, never drawn by AppKit (which would
/// replace them when the view is resized or redisplayed).
private final class ImageLayerView: NSView {
    override var wantsUpdateLayer: Bool { true }
    override func updateLayer() {}
}

/// The system's Reduce Motion setting on macOS, and observations of what decides whether an
/// animation plays: the display options (Reduce Motion; posted on the workspace's own
/// notification center), the system's Animated Images setting and `ImageAnimation.isEnabled`.
/// Removed with the observer.
final class ReduceMotionObserver {
    /// Whether Reduce Motion is on.
    @MainActor static var isOn: Bool { NSWorkspace.shared.accessibilityDisplayShouldReduceMotion }
    private var observations: [(center: NotificationCenter, token: any NSObjectProtocol)] = []

    /// Calls `onChange` on the main actor whenever one of the settings changes.
    @MainActor init(_ onChange: @escaping @MainActor @Sendable () -> Void) {
        var names = [(NSWorkspace.shared.notificationCenter, NSWorkspace.accessibilityDisplayOptionsDidChangeNotification)]
        names.append((NotificationCenter.default, ImageAnimation.settingDidChangeNotification))
        if let name = SystemAnimatedImages.didChangeNotification { names.append((NotificationCenter.default, name)) }
        for (center, name) in names {
            let token = center.addObserver(forName: name, object: nil, queue: .main) { _ in
                MainActor.assumeIsolated { onChange() }
            }
            observations.append((center, token))
        }
    }

    deinit {
        for (center, token) in observations { center.removeObserver(token) }
    }
}
#endif
