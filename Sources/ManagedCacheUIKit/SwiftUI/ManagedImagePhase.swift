import ManagedCache

/// What a ``ManagedImage`` (or any view driven by a ``ManagedImageModel``) shows.
public enum ManagedImagePhase: Sendable, Equatable {
    /// Nothing to show yet: no URL, not on screen, not laid out yet, or a load that was cancelled
    /// (pushed out of the loading buffer; it starts again when the view appears again).
    case empty
    /// Loading; the progress once bytes arrive.
    case loading(LoadProgress?)
    /// The shared image, and where it came from.
    case success(DecodedImage, DataOrigin)
    /// The load failed with this error.
    case failure(ManagedCacheError)

    /// The image, in `.success`.
    public var image: DecodedImage? {
        if case .success(let image, _) = self { return image }
        return nil
    }
}
