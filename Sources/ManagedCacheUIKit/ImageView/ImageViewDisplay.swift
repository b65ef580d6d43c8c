import ManagedCache

/// Everything a `ManagedImageView` shows at one moment: what a UIKit view renders and what the
/// headless view passes to its display hook.
public struct ImageViewDisplay: Sendable, Equatable {
    /// The picture area.
    public var content: DisplayedContent
    /// Whether the activity indicator spins (loading from the network or the file cache).
    public var isActivityIndicatorVisible: Bool
    /// How much of the current download has arrived, while loading and once bytes came in.
    public var progress: LoadProgress?

    /// Creates a display state.
    public init(content: DisplayedContent, isActivityIndicatorVisible: Bool = false, progress: LoadProgress? = nil) {
        self.content = content
        self.isActivityIndicatorVisible = isActivityIndicatorVisible
        self.progress = progress
    }

    /// Nothing shown, nothing spinning: a new view.
    public static let empty = ImageViewDisplay(content: .empty)
}
