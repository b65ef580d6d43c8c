#if !(canImport(UIKit) && !os(watchOS)) && !(canImport(AppKit) && !canImport(UIKit))
import Dispatch
import Foundation
import ManagedCache
import ManagedCacheLocking

/// An image view without a screen: the Linux (and watchOS) `ManagedImageView`, with the
/// API of the UIKit one. It holds what it would display (`displayed`, `isActivityIndicatorVisible`,
/// `progress`) and calls `displayHook` on every change, so tests, examples and server-side
/// renderers see exactly what a UIKit view would show, and when.
///
/// ```swift
/// // Assumes `manager` (an ObjectManager) and `avatarURL` (a URL).
/// let cell = ManagedImageView(manager: manager)
/// cell.placeholder = DecodedImage(info: ImageInfo(format: .png, pixelWidth: 44, pixelHeight: 44), encodedData: nil)
/// cell.displayHook = { display in print(display.content) }
/// cell.load(url: avatarURL)  // placeholder + spinner, then the image; a memory hit shows at once
/// cell.clear()  // before reuse: the old image is never shown again
/// ```
///
/// Guarantees (each tested):
/// - the placeholder (or nothing) and the spinner while loading, then the image; a progressive
///   JPEG's previews in between (`showsPreviews`), never left behind by a failure;
/// - a memory hit is displayed inside the call that loads it, with no placeholder first;
/// - after `load`, `clear()` or `manage()` for another URL, nothing of the previous URL is ever
///   displayed or reported, even if its load completes later;
/// - on failure the failure image and `onFailure` with the typed error; when the manager's
///   loading buffer pushes the load out, the placeholder and `onCancelled`.
///
/// Thread-safe. The display hook, the closures and the delegate are called one at a time, in
/// order, on the thread that made the change (or on one already delivering an earlier change);
/// they may call back into the view. The view is a `ManagedObjectUser`; the manager holds it
/// weakly, so a view that is deallocated simply stops loading.
public final class ManagedImageView: ManagedObjectUser {
    private struct Handlers {
        var displayHook: (@Sendable (ImageViewDisplay) -> Void)?
        var onImageSet: (@Sendable (DecodedImage, DataOrigin) -> Void)?
        var onFailure: (@Sendable (ManagedCacheError) -> Void)?
        var onCancelled: (@Sendable (ManagedCacheError.CancellationReason) -> Void)?
        var onProgress: (@Sendable (LoadProgress) -> Void)?
        var onTap: (@Sendable () -> Void)?
        weak var delegate: (any ManagedImageViewDelegate)?
    }

    /// Delayed loads of every headless view start on this serial queue, in deadline order.
    private static let delayQueue = DispatchQueue(label: "ManagedCacheUIKit.ManagedImageView.delayedLoads")

    /// The platform-independent core every decision is made in (the forwarded properties are in
    /// `ManagedImageView+Configuration.swift`).
    let model: ImageViewModel
    private let handlers = Lock(Handlers())

    /// Where the manager's asynchronous callbacks arrive. Default `.immediate`; `.mainQueue`
    /// needs a running main queue (`dispatchMain()` or an `async` main).
    public let callbackDelivery: CallbackDelivery

    /// Creates a view.
    ///
    /// - Parameters:
    ///   - manager: The manager that loads and caches its images. Default
    ///     ``ManagedCache/ObjectManager/defaultImageManager``.
    ///   - delivery: Where the manager's callbacks arrive. Default ``/ManagedCache/CallbackDelivery/immediate``.
    public init(manager: ObjectManager = .defaultImageManager, delivery: CallbackDelivery = .immediate) {
        model = ImageViewModel(manager: manager, drainsOnMainThread: false, scheduleQueue: Self.delayQueue)
        callbackDelivery = delivery
        model.bind(host: self) { [weak self] event in self?.handle(event) }
    }

    // MARK: - How it looks

    /// Whether the user asked for reduced motion: no transition then. Default `false` (the UIKit
    /// view follows the system's Reduce Motion setting instead).
    public var reducesMotion: Bool {
        get { model.reducesMotion }
        set { model.reducesMotion = newValue }
    }

    // MARK: - Loading

    /// Loads the current `url` (HJCache's `[objMan manage:view]`). A memory hit is displayed
    /// before this returns; otherwise the placeholder and the spinner until the image arrives.
    /// Managing again for the request already loading or shown does nothing; after a failure or
    /// a cancellation it loads again. With no `url` it is `clear()`.
    public func manage() {
        model.manage(fallbackFormat: nil)
    }

    /// Shows `image`, which the app already has (an edited photo, a picture it drew), and stores it
    /// under `oid`, so that a later load of the oid (by this view or any other user) is a memory
    /// hit (Haneke's `hnk_setImage:withKey:`). Shown at once, with no transition;
    /// `onImageSet` is called with origin `.stored`.
    ///
    /// The image is stored as the oid's original and, when the view has a `format` or
    /// `processors`, as the variant they make of it, which is made in the background and then
    /// replaces the image on the view. Users of the oid that wait for it or show its previous image
    /// receive it.
    ///
    /// - Parameters:
    ///   - image: The image to show and store.
    ///   - oid: The key it is stored under (`ObjectRequest.oid`).
    ///   - url: Where the image can be loaded from again, if anywhere (default `nil`: the view,
    ///     managed again once the memory cache has let the image go, finds it only in the caches).
    ///   - toFileCache: Whether the file cache keeps it too (default `false`).
    public func setImage(_ image: DecodedImage, oid: String, url: URL? = nil, toFileCache: Bool = false) {
        model.setImage(image, oid: oid, url: url, toFileCache: toFileCache, fallbackFormat: nil)
    }

    /// Detaches from the manager, forgets `url` and `oid` and shows the placeholder (or
    /// nothing): call it before reusing the view. Nothing of the previous URL is shown again.
    public func clear() {
        model.clear()
    }

    /// Loads `url` after `delay` seconds (UIImageView+Cached's `loadFromURL:afterDelay:`, to let
    /// text and layout come first) unless `clear()`, `load`, `manage()` or another URL comes
    /// first. The placeholder shows meanwhile; an image already in memory shows at once.
    ///
    /// - Parameters:
    ///   - url: The image's URL.
    ///   - delay: Seconds to wait before loading.
    public func loadFromURL(_ url: URL, afterDelay delay: Double) {
        model.load(url, afterDelay: delay, fallbackFormat: nil)
    }

    /// Acts as a tap on the view: calls `onTap` and the delegate.
    public func tap() {
        let handlers = handlers.withLock { $0 }
        handlers.onTap?()
        handlers.delegate?.managedImageViewWasTapped(self)
    }

    // MARK: - What is displayed

    /// Whether the activity indicator spins now.
    public var isActivityIndicatorVisible: Bool { model.rendered.isActivityIndicatorVisible }

    /// Called with the new display on every change (not with the current one when set).
    public var displayHook: (@Sendable (ImageViewDisplay) -> Void)? {
        get { handlers.withLock { $0.displayHook } }
        set { handlers.withLock { $0.displayHook = newValue } }
    }

    // MARK: - Callbacks

    /// Called when the current URL's image is displayed, with where it came from.
    public var onImageSet: (@Sendable (DecodedImage, DataOrigin) -> Void)? {
        get { handlers.withLock { $0.onImageSet } }
        set { handlers.withLock { $0.onImageSet = newValue } }
    }

    /// Called when the current URL fails, with the reason (`.httpStatus`, `.decodingFailed`, …).
    public var onFailure: (@Sendable (ManagedCacheError) -> Void)? {
        get { handlers.withLock { $0.onFailure } }
        set { handlers.withLock { $0.onFailure = newValue } }
    }

    /// Called when the manager cancels the current load (its loading buffer pushed it out).
    public var onCancelled: (@Sendable (ManagedCacheError.CancellationReason) -> Void)? {
        get { handlers.withLock { $0.onCancelled } }
        set { handlers.withLock { $0.onCancelled = newValue } }
    }

    /// Called when bytes of the current URL arrive.
    public var onProgress: (@Sendable (LoadProgress) -> Void)? {
        get { handlers.withLock { $0.onProgress } }
        set { handlers.withLock { $0.onProgress = newValue } }
    }

    /// Whether a UIKit view in this state would listen for taps: only while `onTap` or a delegate
    /// is set (so an image inside a table cell does not swallow row selection). For tests.
    package var listensForTaps: Bool {
        handlers.withLock { TapRecognition.isNeeded(hasTapHandler: $0.onTap != nil, hasDelegate: $0.delegate != nil) }
    }

    /// Called by `tap()`.
    public var onTap: (@Sendable () -> Void)? {
        get { handlers.withLock { $0.onTap } }
        set { handlers.withLock { $0.onTap = newValue } }
    }

    /// Told everything the closures are told. Held weakly.
    public var delegate: (any ManagedImageViewDelegate)? {
        get { handlers.withLock { $0.delegate } }
        set { handlers.withLock { $0.delegate = newValue } }
    }

    // MARK: - Private

    private func handle(_ event: ImageViewEvent) {
        let handlers = handlers.withLock { $0 }
        let delegate = handlers.delegate
        switch event {
        case .display(let display):
            handlers.displayHook?(display)
        case .imageSet(let image, let origin):
            handlers.onImageSet?(image, origin)
            delegate?.managedImageView(self, didSet: image, from: origin)
        case .failed(let error):
            handlers.onFailure?(error)
            delegate?.managedImageView(self, didFailWith: error)
        case .cancelled(let reason):
            handlers.onCancelled?(reason)
            delegate?.managedImageView(self, wasCancelledBecause: reason)
        case .progress(let progress):
            handlers.onProgress?(progress)
            delegate?.managedImageView(self, didReceive: progress)
        }
    }
}
#endif
