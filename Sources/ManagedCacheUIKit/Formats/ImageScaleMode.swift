/// How an image is fitted into a format's target size (Haneke's `HNKScaleMode`, UIKit's content modes).
public enum ImageScaleMode: String, Sendable, Hashable, CaseIterable {
    /// Stretched to exactly the target size, ignoring the aspect ratio (`scaleToFill`).
    case fill
    /// Scaled to fit inside the target size, keeping the aspect ratio; the result may be smaller
    /// than the target in one direction (`scaleAspectFit`).
    case aspectFit
    /// Scaled to cover the target size, keeping the aspect ratio, and cropped to it around the
    /// centre (`scaleAspectFill`). The default for thumbnails and avatars.
    case aspectFill
}
