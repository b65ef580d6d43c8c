/// A size in pixels: how large a bitmap is, or how large a format wants it.
///
/// Pixels rather than points, because memory cost, decoding and variant keys all depend on
/// pixels; a UIKit view converts its bounds with the screen's scale before asking for a format.
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    /// Columns of pixels.
    public var width: Int
    /// Rows of pixels.
    public var height: Int

    /// Creates a size.
    ///
    /// - Parameters:
    ///   - width: Columns of pixels.
    ///   - height: Rows of pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `width × height`, saturating at `Int.max` instead of overflowing.
    public var pixelCount: Int {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? Int.max : product
    }

    /// Whether the size holds no pixel: `true` when either side is zero or negative.
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// "64×48".
    public var description: String { "\(width)×\(height)" }
}

/// A rectangle in pixels, from the top-left corner of a bitmap. Its origin may be negative and it
/// may extend past the bitmap (aspect-fill draws past the edges and is cropped).
public struct PixelRect: Sendable, Hashable {
    /// Distance from the bitmap's left edge.
    public var x: Int
    /// Distance from the bitmap's top edge.
    public var y: Int
    /// The rectangle's width.
    public var width: Int
    /// The rectangle's height.
    public var height: Int

    /// Creates a rectangle.
    ///
    /// - Parameters:
    ///   - x: Distance from the bitmap's left edge; may be negative.
    ///   - y: Distance from the bitmap's top edge; may be negative.
    ///   - width: The rectangle's width.
    ///   - height: The rectangle's height.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}
