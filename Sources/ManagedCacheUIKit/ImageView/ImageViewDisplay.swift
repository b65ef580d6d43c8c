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
    /// How the change to this display is animated: the view's `transition` when the
    /// loaded image arrived after the view had shown something else for its load (a download, a
    /// file-cache read, a decode, a newer stored image); `.none` for a memory hit, a reused view's
    /// first image from memory, and every display that is not a loaded image.
    public var transition: ImageTransition

    /// Creates a display state.
    ///
    /// - Parameters:
    ///   - content: The picture area.
    ///   - isActivityIndicatorVisible: Whether the activity indicator spins. Default `false`.
    ///   - progress: How much of the download has arrived. Default `nil`.
    ///   - transition: How the content should appear. Default `.none`.
    public init(
        content: DisplayedContent, isActivityIndicatorVisible: Bool = false, progress: LoadProgress? = nil,
        transition: ImageTransition = .none
    ) {
        self.content = content
        self.isActivityIndicatorVisible = isActivityIndicatorVisible
        self.progress = progress
        self.transition = transition
    }

    /// Nothing shown, nothing spinning: a new view.
    public static let empty = ImageViewDisplay(content: .empty)

    /// What assistive technologies hear as the view's value: "Loading" (with the
    /// percentage once known) while the activity indicator spins, "Failed to load" after a
    /// failure, nothing once the image shows, in the person's language
    /// (``ImageAccessibilityStrings/current``, which an app can replace). The app sets the label
    /// (what the image depicts); the view adds the image trait and this value.
    public var accessibilityValue: String? {
        accessibilityValue(using: .current)
    }

    /// The value assistive technologies hear, in `strings`.
    ///
    /// - Parameter strings: The words to use.
    /// - Returns: The loading or failure sentence, or `nil` once the image shows.
    public func accessibilityValue(using strings: ImageAccessibilityStrings) -> String? {
        if case .failure = content { return strings.failedToLoad }
        guard isActivityIndicatorVisible else { return nil }
        if let fraction = progress?.fractionCompleted { return strings.loading(percent: Int((fraction * 100).rounded(.down))) }
        return strings.loading
    }
}
