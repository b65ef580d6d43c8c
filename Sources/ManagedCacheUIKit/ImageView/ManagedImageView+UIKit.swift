#if canImport(UIKit) && !os(watchOS)
import ManagedCache
import UIKit

/// A `UIView` that shows the image at a URL, managed by an `ObjectManager`: HJCache's
/// `HJManagedImageV`. Usable from code (`init(frame:)`) and Interface Builder (`init(coder:)`).
///
/// ```swift
/// final class PhotoCell: UITableViewCell {
///     let photoView = ManagedImageView()
///
///     func configure(photoURL: URL) {  // from cellForRowAt or a cell registration
///         photoView.placeholder = UIImage(named: "grey").flatMap(DecodedImage.init(uiImage:))
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
/// This class is a thin shell: every decision (what to show, when, which result is stale,
/// what to cancel) is made by the platform-independent core that the headless `ManagedImageView`
/// shares and that is tested on Linux. The shell renders the core's display into an internal
/// `UIImageView` and `UIActivityIndicatorView` and forwards taps.
///
/// Without a `format`, images are decoded downsampled to the view's size in pixels and its
/// `contentMode` (a per-size format, as Haneke's default format), once the view has a size.
/// Callbacks and rendering happen on the main thread (`callbackDelivery` is `.mainQueue`).
///
/// An image that arrives after the view showed something else for its load cross-fades in
/// (`transition`); the core decides when, the shell only runs
/// `UIView.transition(with:duration:options:animations:completion:)`, and not at all while
/// Reduce Motion is on. A memory hit, a reused cell's first image from memory, is set at once.
/// When the view's size changes enough to need another variant (a rotation, a self-sizing cell),
/// the image on screen stays, with no placeholder or spinner, until the new variant replaces it
/// at once.
///
/// The view's scale is its trait collection's `displayScale` on every platform (there is no
/// `UIScreen` on visionOS). Creating the view with a manager of your own never creates
/// ``ManagedCache/ObjectManager/defaultImageManager``.
@MainActor
public final class ManagedImageView: UIView, ManagedObjectUser {
    /// The platform-independent core every decision is made in (the forwarded properties are in
    /// `ManagedImageView+Configuration.swift`).
    nonisolated let model: ImageViewModel
    private let imageView = UIImageView()
    private let activityIndicator = UIActivityIndicatorView(style: .medium)

    /// Called when the current URL's image is displayed, with where it came from.
    public var onImageSet: ((DecodedImage, DataOrigin) -> Void)?
    /// Called when the current URL fails, with the reason.
    public var onFailure: ((ManagedCacheError) -> Void)?
    /// Called when the manager cancels the current load (its loading buffer pushed it out).
    public var onCancelled: ((ManagedCacheError.CancellationReason) -> Void)?
    /// Called when bytes of the current URL arrive.
    public var onProgress: ((LoadProgress) -> Void)?
    /// Called when the view is tapped. The view listens for taps only while this or a delegate is
    /// set, and lets touches through to the cell around it either way.
    public var onTap: (() -> Void)? {
        didSet { updateTapRecognizer() }
    }
    /// Told everything the closures are told. Held weakly.
    public weak var delegate: (any ManagedImageViewDelegate)? {
        didSet { updateTapRecognizer() }
    }
    private var tapRecognizer: UITapGestureRecognizer?
    /// The view-size decision.
    private let sizing = LayoutSizing()
    /// The pixel size the current load asked for; `nil` with an explicit format or nothing loaded.
    private var requestedPixelSize: PixelSize?
    /// `manage()` was called before the view had a size: the first layout loads.
    private var waitsForLayout = false
    /// An image the app set before the view had a size: the first layout stores its variant for
    /// the view's size.
    private var pendingStoredImage: StoredImage?

    /// What `setImage(_:oid:url:toFileCache:)` was given.
    private struct StoredImage {
        let image: DecodedImage
        let oid: String
        let url: URL?
        let toFileCache: Bool
    }
    /// Plays animated images.
    private lazy var animator = ImageViewAnimator(imageView: imageView)

    /// Creates a view managed by ``ManagedCache/ObjectManager/defaultImageManager``.
    ///
    /// - Parameter frame: The view's frame.
    public override init(frame: CGRect) {
        model = ImageViewModel(manager: .defaultImageManager, drainsOnMainThread: true, scheduleQueue: .main)
        super.init(frame: frame)
        setUp()
    }

    /// Creates a view managed by a manager of the app's choosing. The default manager is never
    /// created for it.
    ///
    /// - Parameters:
    ///   - frame: The view's frame. Default `.zero` (Auto Layout sizes it).
    ///   - manager: The manager that loads and caches its images.
    public init(frame: CGRect = .zero, manager: ObjectManager) {
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
        // One accessibility element with the image trait; the app sets `accessibilityLabel`
        // (what the picture shows), the view keeps `accessibilityValue` (loading, failed).
        isAccessibilityElement = true
        accessibilityTraits = .image
        imageView.frame = bounds
        imageView.autoresizingMask = [.flexibleWidth, .flexibleHeight]
        imageView.contentMode = contentMode
        imageView.clipsToBounds = true
        addSubview(imageView)
        activityIndicator.hidesWhenStopped = true
        activityIndicator.center = CGPoint(x: bounds.midX, y: bounds.midY)
        activityIndicator.autoresizingMask = [.flexibleLeftMargin, .flexibleRightMargin, .flexibleTopMargin, .flexibleBottomMargin]
        addSubview(activityIndicator)
        // The core drains on the main thread only (`drainsOnMainThread`), so this is main-isolated.
        model.bind(host: self) { [weak self] event in
            MainActor.assumeIsolated { self?.handle(event) }
        }
    }

    /// How images are scaled in the view; also the scale mode of the view's default format.
    public override var contentMode: UIView.ContentMode {
        didSet { imageView.contentMode = contentMode }
    }

    // MARK: - Loading

    /// Loads the current `url`. A memory hit is displayed before this returns, with no placeholder
    /// first. Without a `format`, the image is decoded at the view's laid-out pixel size: a view
    /// that has no size yet (or no display scale) waits for its first layout instead of decoding
    /// at full size (`LayoutSizing`). When the size changes enough to need another variant, the
    /// image on screen stays until that variant replaces it.
    public func manage() {
        pendingStoredImage = nil
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

    /// Loads the waiting URL once the view has a size, and the right variant when the size
    /// changes enough (larger, or a quarter smaller).
    public override func layoutSubviews() {
        super.layoutSubviews()
        manageIfLayoutMatters()
    }

    /// A view added to a window learns its display scale, and plays its animation; out of a
    /// window the animation stops.
    public override func didMoveToWindow() {
        super.didMoveToWindow()
        animator.viewMovedToWindow(window != nil)
        manageIfLayoutMatters()
    }

    /// Whether this view plays animated GIF, APNG and WebP images. Default `true`. They play only
    /// while the view is in a window, `ImageAnimation.isEnabled` is on, the system's Reduce
    /// Motion is off and its Animated Images setting is on (iOS 17, tvOS 17, visionOS 1 and
    /// later); otherwise the first frame shows. Frames come from the image's shared frame buffer
    /// (decoded off the main thread), each view with its own playhead, refreshed by one display
    /// link shared by every animated view, at the rate the animations need.
    public var animatesImages: Bool {
        get { animator.animatesImages }
        set { animator.animatesImages = newValue }
    }

    /// Detaches from the manager, forgets `url` and `oid` and shows the placeholder (or nothing):
    /// call it in `prepareForReuse`. Nothing of the previous URL is shown again.
    public func clear() {
        pendingStoredImage = nil
        waitsForLayout = false
        requestedPixelSize = nil
        model.clear()
    }

    /// Shows `image`, which the app already has, and stores it under `oid` (Haneke's
    /// `hnk_setImage:withKey:`): shown at once with no transition, stored as the
    /// oid's original and, for the view's variant (its `format` and `processors`, or its size),
    /// made in the background; a later load of the oid by this view or any other is a memory hit.
    /// A view without a size yet stores its size's variant at its first layout.
    ///
    /// - Parameters:
    ///   - image: The image to show and store.
    ///   - oid: The key it is stored under.
    ///   - url: Where it can be loaded from again, if anywhere (default `nil`: found in the caches only).
    ///   - toFileCache: Whether the file cache keeps it too (default `false`).
    public func setImage(_ image: DecodedImage, oid: String, url: URL? = nil, toFileCache: Bool = false) {
        let stored = StoredImage(image: image, oid: oid, url: url, toFileCache: toFileCache)
        waitsForLayout = false
        pendingStoredImage = nil
        requestedPixelSize = nil
        var fallbackFormat: ImageCacheFormat?
        if format == nil {
            if let size = laidOutPixelSize() {
                requestedPixelSize = size
                fallbackFormat = sizing.format(for: size, scaleMode: scaleMode)
            } else {
                pendingStoredImage = stored  // shown as it is now, its view-size variant at the first layout
            }
        }
        model.setImage(image, oid: oid, url: url, toFileCache: toFileCache, fallbackFormat: fallbackFormat)
    }

    /// Loads a URL after a delay (UIImageView+Cached's `loadFromURL:afterDelay:`, to let text and
    /// layout come first) unless the view is cleared, loaded or given another URL first.
    ///
    /// - Parameters:
    ///   - url: The image's URL.
    ///   - delay: Seconds to wait before loading.
    public func loadFromURL(_ url: URL, afterDelay delay: TimeInterval) {
        pendingStoredImage = nil
        model.load(url, afterDelay: delay, fallbackFormat: viewFormat())
    }

    /// Always `.mainQueue`.
    nonisolated public var callbackDelivery: CallbackDelivery { .mainQueue }

    // MARK: - Rendering

    private func handle(_ event: ImageViewEvent) {
        guard let display = notify(event) else { return }
        let visible = display.content.visibleImage
        // An animation already playing keeps the frame it shows.
        if !animator.isPlaying(visible) {
            let image = visible?.uiImage(scale: displayScale)
            // A fade still running (a reused cell) must not show the previous image over this one.
            imageView.layer.removeAllAnimations()
            let transition = display.transition.respectingReducedMotion(UIAccessibility.isReduceMotionEnabled)
            if transition == .none {
                imageView.image = image
            } else {
                UIView.transition(
                    with: imageView, duration: transition.duration, options: [.transitionCrossDissolve, .allowUserInteraction],
                    animations: { [imageView] in imageView.image = image }, completion: nil)
            }
        }
        animator.show(visible, scale: displayScale, inWindow: window != nil)
        accessibilityValue = display.accessibilityValue
        if display.isActivityIndicatorVisible {
            activityIndicator.startAnimating()
        } else {
            activityIndicator.stopAnimating()
        }
    }

    /// Installs the tap recognizer while something wants taps, and removes it when nothing does.
    private func updateTapRecognizer() {
        let needed = TapRecognition.isNeeded(hasTapHandler: onTap != nil, hasDelegate: delegate != nil)
        if needed, tapRecognizer == nil {
            let recognizer = UITapGestureRecognizer(target: self, action: #selector(handleTap))
            recognizer.cancelsTouchesInView = false  // the cell around the view still gets the touch
            addGestureRecognizer(recognizer)
            tapRecognizer = recognizer
        } else if !needed, let recognizer = tapRecognizer {
            removeGestureRecognizer(recognizer)
            tapRecognizer = nil
        }
    }

    @objc private func handleTap() {
        onTap?()
        delegate?.managedImageViewWasTapped(self)
    }

    /// Pixels per point for the displayed `UIImage` (1 until the view knows its display).
    private var displayScale: CGFloat { max(1, traitCollection.displayScale) }

    /// The view's size in pixels, once it is laid out and knows its scale (its traits'
    /// `displayScale`, which a view in a window has on every platform; 0 means unknown). Not
    /// `window.screen.scale`: `UIScreen` does not exist on visionOS.
    private func laidOutPixelSize() -> PixelSize? {
        let scale = traitCollection.displayScale
        return sizing.pixelSize(width: Double(bounds.width), height: Double(bounds.height), scale: Double(scale))
    }

    /// The view format for the current layout, or `nil` before layout.
    private func viewFormat() -> ImageCacheFormat? {
        laidOutPixelSize().map { sizing.format(for: $0, scaleMode: scaleMode) }
    }

    private var scaleMode: ImageScaleMode {
        switch contentMode {
        case .scaleToFill: return .fill
        case .scaleAspectFill: return .aspectFill
        default: return .aspectFit
        }
    }

    private func manageIfLayoutMatters() {
        if let pending = pendingStoredImage, let size = laidOutPixelSize() {
            // The image the app set before layout: stored again for the view's size (the image on
            // screen stays until that variant is made).
            pendingStoredImage = nil
            requestedPixelSize = size
            model.setImage(
                pending.image, oid: pending.oid, url: pending.url, toFileCache: pending.toFileCache,
                fallbackFormat: sizing.format(for: size, scaleMode: scaleMode), announces: false)
            return
        }
        guard url != nil, format == nil, let size = laidOutPixelSize() else { return }
        if waitsForLayout || sizing.needsNewVariant(current: requestedPixelSize, new: size) { manage() }
    }
}
#endif
