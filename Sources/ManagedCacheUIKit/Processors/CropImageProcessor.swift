/// Cuts a rectangle out of an image: a window of a given size placed by an anchor (the centre,
/// an edge), or an explicit rectangle. The window never extends past the image: a size larger
/// than the image is cut down to it, and a rectangle is clipped to it.
///
/// ```swift
/// let portrait = CropImageProcessor(size: PixelSize(width: 400, height: 400), anchor: .top)  // a square from the top
/// ```
public struct CropImageProcessor: ImageProcessor {
    /// Where the window sits when it is smaller than the image: `x` from 0 (left) to 1 (right),
    /// `y` from 0 (top) to 1 (bottom).
    public struct Anchor: Sendable, Hashable {
        /// 0 keeps the left edge, 1 the right edge.
        public var x: Double
        /// 0 keeps the top edge, 1 the bottom edge.
        public var y: Double

        /// An anchor at `x`, `y` (each clamped to 0…1).
        ///
        /// - Parameters:
        ///   - x: 0 keeps the left edge, 1 the right edge.
        ///   - y: 0 keeps the top edge, 1 the bottom edge.
        public init(x: Double, y: Double) {
            self.x = min(max(x, 0), 1)
            self.y = min(max(y, 0), 1)
        }

        /// The middle of the image.
        public static let center = Anchor(x: 0.5, y: 0.5)
        /// The middle of the top edge (portraits keep their faces).
        public static let top = Anchor(x: 0.5, y: 0)
        /// The middle of the bottom edge.
        public static let bottom = Anchor(x: 0.5, y: 1)
        /// The middle of the left edge.
        public static let left = Anchor(x: 0, y: 0.5)
        /// The middle of the right edge.
        public static let right = Anchor(x: 1, y: 0.5)
    }

    private enum Window: Sendable, Hashable {
        case sized(PixelSize, Anchor)
        case rect(PixelRect)
    }

    private let window: Window

    /// A window of `size` pixels, placed by `anchor` (default `.center`).
    ///
    /// - Parameters:
    ///   - size: The window's size in pixels; cut down to the image where it is larger.
    ///   - anchor: Where the window sits in a larger image. Default ``Anchor/center``.
    public init(size: PixelSize, anchor: Anchor = .center) {
        window = .sized(size, anchor)
    }

    /// The pixels of `rect`, measured from the image's top-left corner (upright).
    ///
    /// - Parameter rect: The rectangle to keep, in pixels; clipped to the image.
    public init(rect: PixelRect) {
        window = .rect(rect)
    }

    /// "crop(100x100,0.5,0.5)" for a sized window, "crop(10,20,100x100)" for a rectangle.
    public var identifier: String {
        switch window {
        case .sized(let size, let anchor): "crop(\(size.width)x\(size.height),\(anchor.x),\(anchor.y))"
        case .rect(let rect): "crop(\(rect.x),\(rect.y),\(rect.width)x\(rect.height))"
        }
    }

    /// The rectangle cut out of an image of `source` pixels: inside it, at least 1×1.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: The window, in the image's pixels from its top-left corner.
    public func cropRect(forSource source: PixelSize) -> PixelRect {
        let sourceWidth = max(1, source.width)
        let sourceHeight = max(1, source.height)
        switch window {
        case .sized(let size, let anchor):
            let width = min(max(1, size.width), sourceWidth)
            let height = min(max(1, size.height), sourceHeight)
            return PixelRect(
                x: Int((Double(sourceWidth - width) * anchor.x).rounded()),
                y: Int((Double(sourceHeight - height) * anchor.y).rounded()), width: width, height: height)
        case .rect(let rect):
            let left = min(max(0, rect.x), sourceWidth - 1)
            let top = min(max(0, rect.y), sourceHeight - 1)
            let right = min(max(left + 1, rect.x + rect.width), sourceWidth)
            let bottom = min(max(top + 1, rect.y + rect.height), sourceHeight)
            return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
        }
    }

    /// The window's pixels; the image itself when the window is the whole image.
    ///
    /// - Parameter image: The image so far (the decoded image, or the previous processor's result).
    /// - Returns: The cropped image.
    /// - Throws: `ImageDecodingError.processingFailed` when Core Graphics cannot draw the image
    ///   (Apple platforms); nothing elsewhere.
    public func process(_ image: DecodedImage) throws -> DecodedImage {
        let source = image.pixelSize
        let crop = cropRect(forSource: source)
        guard crop != PixelRect(x: 0, y: 0, width: source.width, height: source.height) else { return image }
        let plan = RedrawPlan(
            canvasSize: PixelSize(width: crop.width, height: crop.height),
            drawRect: PixelRect(x: -crop.x, y: -crop.y, width: source.width, height: source.height), clip: .none)
        return try PixelCanvas.redraw(image, plan, by: identifier)
    }
}
