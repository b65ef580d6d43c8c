import ManagedCache

#if canImport(UIKit) && !os(watchOS)
/// Told what happens to a `ManagedImageView`, on the main thread. Every method has an empty
/// default. The view holds its delegate **weakly** (HJCache retained its delegates and leaked).
@MainActor
public protocol ManagedImageViewDelegate: AnyObject {
    /// The image of the view's current URL is now displayed; `origin` says where it came from
    /// (`.memory`: shown at once, without a placeholder).
    func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin)
    /// The current URL failed; the failure image (if any) is displayed.
    func managedImageView(_ view: ManagedImageView, didFailWith error: ManagedCacheError)
    /// The manager cancelled the current load (the loading buffer pushed it out); `manage()` restarts it.
    func managedImageView(_ view: ManagedImageView, wasCancelledBecause reason: ManagedCacheError.CancellationReason)
    /// Bytes of the current URL arrived.
    func managedImageView(_ view: ManagedImageView, didReceive progress: LoadProgress)
    /// The view was tapped.
    func managedImageViewWasTapped(_ view: ManagedImageView)
}
#else
/// Told what happens to a headless `ManagedImageView`, on the thread that made the change, one
/// call at a time. Every method has an empty default. The view holds its delegate **weakly**
/// (HJCache retained its delegates and leaked).
public protocol ManagedImageViewDelegate: AnyObject, Sendable {
    /// The image of the view's current URL is now displayed; `origin` says where it came from
    /// (`.memory`: shown at once, without a placeholder).
    func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin)
    /// The current URL failed; the failure image (if any) is displayed.
    func managedImageView(_ view: ManagedImageView, didFailWith error: ManagedCacheError)
    /// The manager cancelled the current load (the loading buffer pushed it out); `manage()` restarts it.
    func managedImageView(_ view: ManagedImageView, wasCancelledBecause reason: ManagedCacheError.CancellationReason)
    /// Bytes of the current URL arrived.
    func managedImageView(_ view: ManagedImageView, didReceive progress: LoadProgress)
    /// The view was tapped (`tap()`).
    func managedImageViewWasTapped(_ view: ManagedImageView)
}
#endif

extension ManagedImageViewDelegate {
    /// Does nothing.
    public func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin) {}
    /// Does nothing.
    public func managedImageView(_ view: ManagedImageView, didFailWith error: ManagedCacheError) {}
    /// Does nothing.
    public func managedImageView(_ view: ManagedImageView, wasCancelledBecause reason: ManagedCacheError.CancellationReason) {}
    /// Does nothing.
    public func managedImageView(_ view: ManagedImageView, didReceive progress: LoadProgress) {}
    /// Does nothing.
    public func managedImageViewWasTapped(_ view: ManagedImageView) {}
}
