import ManagedCache

/// What the view core tells its shell (headless or UIKit), one at a time and in order.
enum ImageViewEvent: Sendable {
    /// Show this (always the latest state when it is delivered).
    case display(ImageViewDisplay)
    /// The current URL's image is now displayed.
    case imageSet(DecodedImage, DataOrigin)
    /// The current URL failed; the failure image is displayed.
    case failed(ManagedCacheError)
    /// The current load was cancelled (the loading buffer pushed it out, or the manager stopped).
    case cancelled(ManagedCacheError.CancellationReason)
    /// Bytes of the current URL arrived.
    case progress(LoadProgress)
}
