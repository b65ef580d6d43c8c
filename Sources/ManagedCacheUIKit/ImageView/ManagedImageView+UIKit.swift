#if canImport(UIKit) && !os(watchOS)
import ManagedCache
import UIKit

/// A `UIView` that shows the image at a URL, managed by an `ObjectManager`: HJCache's
/// `HJManagedImageV`. Usable from code (`init(frame:)`) and Interface Builder (`init(coder:)`).
///
/// ```swift
/// cell.photoView.placeholder = DecodedImage(uiImage: UIImage(named: "grey")!)
/// cell.photoView.load(url: post.photoURL)      // in cellForRowAt / cell registration
/// override func prepareForReuse() { super.prepareForReuse(); photoView.clear() }
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
@MainActor
public final class ManagedImageView: UIView, ManagedObjectUser {
    /// The view decodes with `ImageDecoder`.
    public typealias Decoder = ImageDecoder

    nonisolated private let model: ImageViewModel
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
    /// Called when the view is tapped.
    public var onTap: (() -> Void)?
    /// Told everything the closures are told. Held weakly.
    public weak var delegate: (any ManagedImageViewDelegate)?

    /// Creates a view managed by `ObjectManager.defaultImageManager`.
    public override init(frame: CGRect) {
        model = ImageViewModel(manager: .defaultImageManager, drainsOnMainThread: true, scheduleQueue: .main)
        super.init(frame: frame)
        setUp()
    }

    /// Creates a view managed by `manager`.
    public convenience init(frame: CGRect = .zero, manager: ObjectManager) {
        self.init(frame: frame)
        self.manager = manager
    }

    /// Creates a view from a storyboard or nib, managed by `ObjectManager.defaultImageManager`.
    public required init?(coder: NSCoder) {
        model = ImageViewModel(manager: .defaultImageManager, drainsOnMainThread: true, scheduleQueue: .main)
        super.init(coder: coder)
        setUp()
    }

    private func setUp() {
        imageView.frame = bounds
        imageView.autoresizingMask = [.flexibleWidth, .flexibleHeight]
        imageView.contentMode = contentMode
        imageView.clipsToBounds = true
        addSubview(imageView)
        activityIndicator.hidesWhenStopped = true
        activityIndicator.center = CGPoint(x: bounds.midX, y: bounds.midY)
        activityIndicator.autoresizingMask = [.flexibleLeftMargin, .flexibleRightMargin, .flexibleTopMargin, .flexibleBottomMargin]
        addSubview(activityIndicator)
        addGestureRecognizer(UITapGestureRecognizer(target: self, action: #selector(handleTap)))
        // The core drains on the main thread only (`drainsOnMainThread`), so this is main-isolated.
        model.bind(host: self) { [weak self] event in
            MainActor.assumeIsolated { self?.handle(event) }
        }
    }

    /// How images are scaled in the view; also the scale mode of the view's default format.
    public override var contentMode: UIView.ContentMode {
        didSet { imageView.contentMode = contentMode }
    }

    // MARK: - What to load

    /// The image's URL; takes effect at the next `manage()`. Results for the previous URL are ignored from then on.
    public var url: URL? {
        get { model.url }
        set { model.url = newValue }
    }

    /// The object id that keys the image instead of the URL; takes effect at the next `manage()`.
    public var oid: String? {
        get { model.oid }
        set { model.oid = newValue }
    }

    /// The format images are fitted and transformed to; `nil` (the default) uses the view's own size.
    public var format: ImageCacheFormat? {
        get { model.format }
        set { model.format = newValue }
    }

    /// The manager that loads and caches the image; takes effect at the next `manage()`.
    public var manager: ObjectManager {
        get { model.manager }
        set { model.manager = newValue }
    }

    /// Shown while there is no image (loading, cleared, cancelled). Default `nil`: nothing.
    public var placeholder: DecodedImage? {
        get { model.placeholder }
        set { model.placeholder = newValue }
    }

    /// Shown when the URL fails to load. Default `nil`: nothing.
    public var failureImage: DecodedImage? {
        get { model.failureImage }
        set { model.failureImage = newValue }
    }

    // MARK: - Loading

    /// Sets `url` and `oid` and loads them.
    public func load(url: URL?, oid: String? = nil) {
        model.url = url
        model.oid = oid
        manage()
    }

    /// Loads the current `url`. A memory hit is displayed before this returns, with no placeholder first.
    public func manage() {
        model.manage(fallbackFormat: viewFormat())
    }

    /// Detaches from the manager, forgets `url` and `oid` and shows the placeholder (or nothing):
    /// call it in `prepareForReuse`. Nothing of the previous URL is shown again.
    public func clear() {
        model.clear()
    }

    /// Loads `url` after `delay` seconds unless the view is cleared, loaded or given another URL first.
    public func loadFromURL(_ url: URL, afterDelay delay: TimeInterval) {
        model.load(url, afterDelay: delay, fallbackFormat: viewFormat())
    }

    /// What the view shows now.
    public var displayed: DisplayedContent { model.rendered.content }

    // MARK: - ManagedObjectUser (called by the manager, on any thread)

    /// The request being loaded or shown.
    nonisolated public var objectRequest: ObjectRequest? { model.objectRequest }
    /// The decoder for the current format.
    nonisolated public var objectDecoder: ImageDecoder { model.objectDecoder }
    /// Always `.mainQueue`.
    nonisolated public var callbackDelivery: CallbackDelivery { .mainQueue }

    /// Hands the image to the core; stale results are ignored there.
    nonisolated public func managedObjectReady(_ object: DecodedImage, origin: DataOrigin, request: ObjectRequest) {
        model.receiveImage(object, origin: origin, request: request)
    }

    /// Hands the failure to the core; stale results are ignored there.
    nonisolated public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        model.receiveFailure(error, request: request)
    }

    /// Hands the progress to the core; stale progress is ignored there.
    nonisolated public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        model.receiveProgress(progress, request: request)
    }

    // MARK: - Rendering

    private func handle(_ event: ImageViewEvent) {
        switch event {
        case .display(let display):
            imageView.image = display.content.visibleImage?.uiImage(scale: displayScale)
            if display.isActivityIndicatorVisible {
                activityIndicator.startAnimating()
            } else {
                activityIndicator.stopAnimating()
            }
        case .imageSet(let image, let origin):
            onImageSet?(image, origin)
            delegate?.managedImageView(self, didSet: image, from: origin)
        case .failed(let error):
            onFailure?(error)
            delegate?.managedImageView(self, didFailWith: error)
        case .cancelled(let reason):
            onCancelled?(reason)
            delegate?.managedImageView(self, wasCancelledBecause: reason)
        case .progress(let progress):
            onProgress?(progress)
            delegate?.managedImageView(self, didReceive: progress)
        }
    }

    @objc private func handleTap() {
        onTap?()
        delegate?.managedImageViewWasTapped(self)
    }

    /// Pixels per point (1 until the view knows its screen).
    private var displayScale: CGFloat { max(1, traitCollection.displayScale) }

    /// The view's size in pixels and content mode as a format, once it has a size.
    private func viewFormat() -> ImageCacheFormat? {
        let scale = displayScale
        let size = PixelSize(width: Int((bounds.width * scale).rounded(.up)),
                             height: Int((bounds.height * scale).rounded(.up)))
        guard !size.isEmpty else { return nil }
        let mode: ImageScaleMode
        switch contentMode {
        case .scaleToFill: mode = .fill
        case .scaleAspectFill: mode = .aspectFill
        default: mode = .aspectFit
        }
        return ImageCacheFormat.viewFormat(pixelSize: size, scaleMode: mode)
    }
}
#endif
