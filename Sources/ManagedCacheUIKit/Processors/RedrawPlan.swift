/// What a processor draws: a canvas, where the whole (upright) image goes on it, measured from
/// the canvas's top-left corner, and the shape that clips it. Pure geometry, the same on every
/// platform, so the decisions the Apple drawing follows are tested on Linux.
public struct RedrawPlan: Sendable, Hashable {
    /// The shape outside which the canvas stays transparent.
    public enum Clip: Sendable, Hashable {
        /// No clipping: the drawn image covers what it covers.
        case none
        /// A rectangle of the canvas's size with corners of `radius` pixels.
        case roundedRect(radius: Int)
        /// The ellipse inscribed in the canvas (a circle on a square canvas).
        case ellipse
    }

    /// The size of the resulting bitmap.
    public var canvasSize: PixelSize
    /// Where the whole image is drawn, in canvas pixels from the top left (may extend past the canvas).
    public var drawRect: PixelRect
    /// The clipping shape.
    public var clip: Clip

    /// Creates a plan.
    ///
    /// - Parameters:
    ///   - canvasSize: The size of the resulting bitmap.
    ///   - drawRect: Where the whole image is drawn, in canvas pixels from the top left.
    ///   - clip: The shape outside which the canvas stays transparent.
    public init(canvasSize: PixelSize, drawRect: PixelRect, clip: Clip) {
        self.canvasSize = canvasSize
        self.drawRect = drawRect
        self.clip = clip
    }

    /// Whether the result has transparent pixels whatever the source: it is clipped, or the image
    /// does not cover the whole canvas.
    public var makesTransparency: Bool {
        if clip != .none { return true }
        return drawRect.x > 0 || drawRect.y > 0 || drawRect.x + drawRect.width < canvasSize.width
            || drawRect.y + drawRect.height < canvasSize.height
    }
}
