/// What a `ManagedImageView` shows in its image area.
public enum DisplayedContent: Sendable, Equatable {
    /// Nothing: no URL yet, cleared, or loading with no placeholder set.
    case empty
    /// The placeholder, while the image is not there (loading, waiting for a delayed load, cleared, cancelled).
    case placeholder(DecodedImage)
    /// A progressive preview of the current URL's image while it downloads (the first scans of a
    /// progressive JPEG; `DecodedImage.isPreview`). The image replaces it; a failure or a
    /// cancellation removes it.
    case preview(DecodedImage)
    /// The loaded image of the current URL.
    case image(DecodedImage)
    /// The current URL failed to load; the failure image if one is set.
    case failure(DecodedImage?)

    /// The picture actually on screen, whichever case it is.
    public var visibleImage: DecodedImage? {
        switch self {
        case .empty: nil
        case .placeholder(let image), .preview(let image), .image(let image): image
        case .failure(let image): image
        }
    }

    /// The loaded image, when this is `.image`.
    public var loadedImage: DecodedImage? {
        if case .image(let image) = self { return image }
        return nil
    }
}
