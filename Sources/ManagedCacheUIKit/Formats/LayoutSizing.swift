/// Decides the pixel size an image view asks for, from its laid-out size: the one decision behind
/// `ManagedImageView`'s and `ManagedImage`'s default formats.
///
/// - Nothing is decided before layout: a zero size or an unknown scale (a view not yet laid out,
///   not yet in a window) returns `nil` and the view waits, instead of decoding at full size.
/// - A new layout asks for a new variant only when it matters: when the new pixel size is larger
///   than what was asked for (the image would be blurry), or smaller by more than
///   `shrinkTolerance` (a quarter by default: memory). Small jitter keeps the variant.
/// - View formats never upscale beyond the source.
public struct LayoutSizing: Sendable, Hashable {
    /// How much smaller (as a fraction of each side) a new layout must be before a smaller variant
    /// is loaded. Default 0.25.
    public var shrinkTolerance: Double

    /// Creates the decision.
    ///
    /// - Parameter shrinkTolerance: How much smaller a layout must become before a smaller
    ///   variant is loaded, as a fraction of each side. Default 0.25.
    public init(shrinkTolerance: Double = 0.25) {
        self.shrinkTolerance = shrinkTolerance
    }

    /// Converts a view's laid-out size to pixels, rounding up.
    ///
    /// - Parameters:
    ///   - width: The view's width in points.
    ///   - height: The view's height in points.
    ///   - scale: Pixels per point (the screen's scale).
    /// - Returns: The size in pixels, or `nil` while any of them is unknown (zero, negative or not
    ///   finite): the view waits for layout.
    public func pixelSize(width: Double, height: Double, scale: Double) -> PixelSize? {
        guard width.isFinite, height.isFinite, scale.isFinite, width > 0, height > 0, scale > 0 else { return nil }
        return PixelSize(width: Int((width * scale).rounded(.up)), height: Int((height * scale).rounded(.up)))
    }

    /// Tells whether a view must load another variant after a new layout.
    ///
    /// - Parameters:
    ///   - current: The pixel size the view asked for, or `nil` when it asked for none yet.
    ///   - new: Its pixel size now.
    /// - Returns: `true` when nothing was asked yet, when `new` is larger on either side, or when
    ///   it is smaller by more than ``shrinkTolerance`` on either side.
    public func needsNewVariant(current: PixelSize?, new: PixelSize) -> Bool {
        guard let current else { return true }
        if new.width > current.width || new.height > current.height { return true }
        let widthRatio = Double(new.width) / Double(max(1, current.width))
        let heightRatio = Double(new.height) / Double(max(1, current.height))
        return widthRatio < 1 - shrinkTolerance || heightRatio < 1 - shrinkTolerance
    }

    /// The format a view of a size uses: named after its size and scale mode, so views of one size
    /// share their variants; never upscaling beyond the source.
    ///
    /// - Parameters:
    ///   - pixelSize: The view's size in pixels.
    ///   - scaleMode: The view's content mode as a scale mode.
    /// - Returns: A format named like `view-320×240-aspectFill`.
    public func format(for pixelSize: PixelSize, scaleMode: ImageScaleMode) -> ImageCacheFormat {
        ImageCacheFormat(
            name: "view-\(pixelSize)-\(scaleMode.rawValue)", size: pixelSize, scaleMode: scaleMode,
            allowsUpscaling: false)
    }
}
