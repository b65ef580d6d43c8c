/// Whether an image's pixels are all opaque, decided from what made them rather than from the
/// alpha layout a decoder happened to choose for the bitmap: the decision behind
/// `DecodedImage.isOpaque`, and so behind the container a variant is stored in (opaque → JPEG,
/// else PNG; `StoredImageEncoding`).
///
/// ImageIO documents no alpha layout for the bitmaps it decodes or makes thumbnails of, and a
/// JPEG has no alpha channel, so a JPEG's pixels are opaque whatever layout its bitmap reports.
/// A redraw keeps the answer unless it makes transparency (a clip, an image that does not cover
/// its canvas): then its pixels are not known to be opaque.
enum PixelOpacity {
    /// Whether decoded pixels are opaque.
    ///
    /// - Parameters:
    ///   - format: The container they were decoded from; `nil` for a bitmap made by an app.
    ///   - layoutHasAlpha: Whether the bitmap's layout has an alpha channel (`true` when unknown).
    static func isOpaque(format: ImageFormat?, layoutHasAlpha: Bool) -> Bool {
        format == .jpeg || !layoutHasAlpha
    }

    /// Whether a redraw of pixels that are (or are not) opaque, following `plan`, is opaque.
    static func isOpaque(redrawing sourceIsOpaque: Bool, _ plan: RedrawPlan) -> Bool {
        sourceIsOpaque && !plan.makesTransparency
    }
}
