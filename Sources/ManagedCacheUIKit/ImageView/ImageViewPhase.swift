import ManagedCache

/// Where an image view is with its current URL.
enum ImageViewPhase: Sendable {
    /// No load: no URL yet, or cleared.
    case idle
    /// `loadFromURL(_:afterDelay:)` is waiting for its delay.
    case scheduled
    /// Managed and waiting for the image.
    case loading(LoadProgress?)
    /// Showing the image of the current URL.
    case showing(DecodedImage, DataOrigin)
    /// The current URL failed.
    case failed(ManagedCacheError)
    /// The manager cancelled the load; `manage()` restarts it.
    case cancelled(ManagedCacheError.CancellationReason)

    /// Whether the view has, or is getting, the image of its request (managing again changes nothing).
    var isLoadingOrShowing: Bool {
        switch self {
        case .loading, .showing: true
        default: false
        }
    }

    var isLoading: Bool {
        if case .loading = self { return true }
        return false
    }
}
