/// What a progressive preview shows of an image still downloading: how many scans of a
/// progressive JPEG had arrived complete when it was made. A `DecodedImage` with a `preview` is
/// never the image itself: it is never cached and goes only to users that asked for previews.
public struct ImagePreview: Sendable, Hashable {
    /// The complete scans the preview was made from (1 or more; the image has more).
    public var completedScans: Int
    /// The bytes of the download that had arrived.
    public var receivedBytes: Int

    /// Describes a preview.
    ///
    /// - Parameters:
    ///   - completedScans: The complete scans it was made from.
    ///   - receivedBytes: The bytes of the download that had arrived.
    public init(completedScans: Int, receivedBytes: Int) {
        self.completedScans = completedScans
        self.receivedBytes = receivedBytes
    }
}
