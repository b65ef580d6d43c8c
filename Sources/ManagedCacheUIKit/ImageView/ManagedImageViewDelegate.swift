import ManagedCache

#if (canImport(UIKit) && !os(watchOS)) || (canImport(AppKit) && !canImport(UIKit))
/// Told what happens to a `ManagedImageView` (UIKit or AppKit), on the main thread. Every method has an empty
/// default. The view holds its delegate **weakly** (HJCache retained its delegates and leaked).
@MainActor
public protocol ManagedImageViewDelegate: AnyObject {
    /// The image of the view's current URL is now displayed.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - image: The image it shows.
    ///   - origin: Where it came from (``/ManagedCache/DataOrigin/memory``: shown at once,
    ///     without a placeholder).
    func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin)
    /// The current URL failed; the failure image (if any) is displayed.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - error: Why.
    func managedImageView(_ view: ManagedImageView, didFailWith error: ManagedCacheError)
    /// The manager cancelled the current load; `manage()` restarts it.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - reason: Who stopped it: usually the loading buffer, which pushed it out.
    func managedImageView(_ view: ManagedImageView, wasCancelledBecause reason: ManagedCacheError.CancellationReason)
    /// Bytes of the current URL arrived.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - progress: The bytes received so far, and the announced total.
    func managedImageView(_ view: ManagedImageView, didReceive progress: LoadProgress)
    /// The view was tapped.
    ///
    /// - Parameter view: The view.
    func managedImageViewWasTapped(_ view: ManagedImageView)
}
#else
/// Told what happens to a headless `ManagedImageView`, on the thread that made the change, one
/// call at a time. Every method has an empty default. The view holds its delegate **weakly**
/// (HJCache retained its delegates and leaked).
public protocol ManagedImageViewDelegate: AnyObject, Sendable {
    /// The image of the view's current URL is now displayed.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - image: The image it shows.
    ///   - origin: Where it came from (``/ManagedCache/DataOrigin/memory``: shown at once,
    ///     without a placeholder).
    func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin)
    /// The current URL failed; the failure image (if any) is displayed.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - error: Why.
    func managedImageView(_ view: ManagedImageView, didFailWith error: ManagedCacheError)
    /// The manager cancelled the current load; `manage()` restarts it.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - reason: Who stopped it: usually the loading buffer, which pushed it out.
    func managedImageView(_ view: ManagedImageView, wasCancelledBecause reason: ManagedCacheError.CancellationReason)
    /// Bytes of the current URL arrived.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - progress: The bytes received so far, and the announced total.
    func managedImageView(_ view: ManagedImageView, didReceive progress: LoadProgress)
    /// The view was tapped (`tap()`).
    ///
    /// - Parameter view: The view.
    func managedImageViewWasTapped(_ view: ManagedImageView)
}
#endif

extension ManagedImageViewDelegate {
    /// Does nothing.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - image: The image it shows.
    ///   - origin: Where it came from.
    public func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin) {}
    /// Does nothing.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - error: Why the URL failed.
    public func managedImageView(_ view: ManagedImageView, didFailWith error: ManagedCacheError) {}
    /// Does nothing.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - reason: Who stopped the load.
    public func managedImageView(_ view: ManagedImageView, wasCancelledBecause reason: ManagedCacheError.CancellationReason) {}
    /// Does nothing.
    ///
    /// - Parameters:
    ///   - view: The view.
    ///   - progress: The bytes received so far.
    public func managedImageView(_ view: ManagedImageView, didReceive progress: LoadProgress) {}
    /// Does nothing.
    ///
    /// - Parameter view: The view.
    public func managedImageViewWasTapped(_ view: ManagedImageView) {}
}
