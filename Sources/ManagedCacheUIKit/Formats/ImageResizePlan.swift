/// The geometry of fitting one image into a format: the size of the resulting bitmap and where
/// the source is drawn in it.
///
/// Pure arithmetic, the same on every platform, so the decisions a platform resizer follows are
/// tested on Linux. Apple platforms draw the source into `drawRect` of a `canvasSize` bitmap.
///
/// ```swift
/// let plan = ImageResizePlan(
///     source: PixelSize(width: 300, height: 200), target: PixelSize(width: 100, height: 100), scaleMode: .aspectFill)
/// assert(plan.canvasSize == PixelSize(width: 100, height: 100))
/// assert(plan.drawRect == PixelRect(x: -25, y: 0, width: 150, height: 100))  // cropped left and right
/// ```
public struct ImageResizePlan: Sendable, Hashable {
    /// The size of the bitmap the resizer produces.
    public let canvasSize: PixelSize
    /// Where the whole source image is drawn, in canvas pixels from the top left.
    public let drawRect: PixelRect

    /// Plans fitting an image into a target size. Sides of zero or less are treated as 1.
    ///
    /// - Parameters:
    ///   - source: The image's size in pixels.
    ///   - target: The format's size in pixels.
    ///   - scaleMode: How the image is fitted.
    ///   - allowsUpscaling: Whether a side may be drawn larger than the source's. Default `false`.
    public init(source: PixelSize, target: PixelSize, scaleMode: ImageScaleMode, allowsUpscaling: Bool = false) {
        let sourceWidth = max(1, source.width)
        let sourceHeight = max(1, source.height)
        let targetWidth = max(1, target.width)
        let targetHeight = max(1, target.height)
        let scaleX = Double(targetWidth) / Double(sourceWidth)
        let scaleY = Double(targetHeight) / Double(sourceHeight)
        func scaled(_ side: Int, _ scale: Double) -> Int { max(1, Int((Double(side) * scale).rounded())) }

        switch scaleMode {
        case .fill:
            let width = allowsUpscaling ? targetWidth : min(targetWidth, sourceWidth)
            let height = allowsUpscaling ? targetHeight : min(targetHeight, sourceHeight)
            canvasSize = PixelSize(width: width, height: height)
            drawRect = PixelRect(x: 0, y: 0, width: width, height: height)
        case .aspectFit:
            let scale = allowsUpscaling ? min(scaleX, scaleY) : min(scaleX, scaleY, 1)
            let width = scaled(sourceWidth, scale)
            let height = scaled(sourceHeight, scale)
            canvasSize = PixelSize(width: width, height: height)
            drawRect = PixelRect(x: 0, y: 0, width: width, height: height)
        case .aspectFill:
            let scale = allowsUpscaling ? max(scaleX, scaleY) : min(max(scaleX, scaleY), 1)
            let width = scaled(sourceWidth, scale)
            let height = scaled(sourceHeight, scale)
            let canvas = PixelSize(width: min(targetWidth, width), height: min(targetHeight, height))
            canvasSize = canvas
            drawRect = PixelRect(
                x: (canvas.width - width) / 2, y: (canvas.height - height) / 2,
                width: width, height: height)
        }
    }

    /// Tells whether following the plan would return the source unchanged.
    ///
    /// - Parameter source: The image's size in pixels.
    /// - Returns: `true` when the canvas is the source's size and the source is drawn whole on it.
    public func leavesUnchanged(_ source: PixelSize) -> Bool {
        canvasSize == source && drawRect == PixelRect(x: 0, y: 0, width: source.width, height: source.height)
    }

    /// The longer side a downsampling decoder (ImageIO's thumbnail size) may decode an image to and
    /// still cover ``drawRect`` in both directions.
    ///
    /// - Parameter source: The image's size in pixels.
    /// - Returns: That longer side, or `nil` when the full size is needed.
    public func decodeDimension(forSource source: PixelSize) -> Int? {
        let sourceWidth = max(1, source.width)
        let sourceHeight = max(1, source.height)
        let scale = max(Double(drawRect.width) / Double(sourceWidth), Double(drawRect.height) / Double(sourceHeight))
        guard scale < 1 else { return nil }
        return Int((scale * Double(max(sourceWidth, sourceHeight))).rounded(.up))
    }
}
