/// How a pixel backend writes an image for the file cache (a format's variant, or an image the
/// app stores): in which container, and whether it is first drawn upright. Platform-neutral, so
/// the decision is tested on Linux; `ImageIODecoding.encode` follows it.
///
/// - An image not stored upright (a camera photo wrapped from a `UIImage` with
///   `imageOrientation == .right`) is drawn upright first, at its upright size, so the file holds
///   upright pixels and decodes upright on the next launch, by any decoder, without depending on
///   an orientation tag being written and read back.
/// - Opaque pixels (`PixelOpacity`: a JPEG's, whatever alpha layout its bitmap reports) are
///   stored as JPEG; pixels that may be transparent as PNG.
struct StoredImageEncoding: Sendable, Hashable {
    /// The file format written.
    enum Container: Sendable, Hashable {
        /// JPEG, at the caller's compression quality.
        case jpeg
        /// PNG, lossless, with alpha.
        case png
    }

    /// The file format written.
    let container: Container
    /// The redraw that stands the image upright before it is encoded, or `nil` when it is upright.
    let uprightRedraw: RedrawPlan?

    /// The encoding of `image`.
    init(for image: DecodedImage) {
        container = image.isOpaque ? .jpeg : .png
        if image.orientation == .up {
            uprightRedraw = nil
        } else {
            let size = image.pixelSize
            uprightRedraw = RedrawPlan(
                canvasSize: size, drawRect: PixelRect(x: 0, y: 0, width: size.width, height: size.height), clip: .none)
        }
    }
}
