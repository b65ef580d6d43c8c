/// The affine transform that draws a bitmap stored with an EXIF orientation upright: maps the
/// bitmap drawn at the origin (in a y-up space, as Core Graphics draws) onto the upright image at
/// the origin. `x' = a·x + c·y + tx`, `y' = b·x + d·y + ty`, Core Graphics' convention.
///
/// Platform-neutral, so the eight cases are tested on Linux; `ProcessorDrawing` hands it to
/// Core Graphics when a processor draws an image that is not stored upright (a `UIImage` from
/// the camera wrapped with its orientation).
struct UprightTransform: Sendable, Hashable {
    var a: Double
    var b: Double
    var c: Double
    var d: Double
    var tx: Double
    var ty: Double

    /// The transform for `orientation`, for an image whose upright size is `upright`.
    init(_ orientation: ImageOrientation, upright: PixelSize) {
        let w = Double(upright.width)
        let h = Double(upright.height)
        switch orientation {
        case .up: (a, b, c, d, tx, ty) = (1, 0, 0, 1, 0, 0)
        case .upMirrored: (a, b, c, d, tx, ty) = (-1, 0, 0, 1, w, 0)
        case .down: (a, b, c, d, tx, ty) = (-1, 0, 0, -1, w, h)
        case .downMirrored: (a, b, c, d, tx, ty) = (1, 0, 0, -1, 0, h)
        case .leftMirrored: (a, b, c, d, tx, ty) = (0, -1, -1, 0, w, h)
        case .right: (a, b, c, d, tx, ty) = (0, -1, 1, 0, 0, h)
        case .rightMirrored: (a, b, c, d, tx, ty) = (0, 1, 1, 0, 0, 0)
        case .left: (a, b, c, d, tx, ty) = (0, 1, -1, 0, w, 0)
        }
    }

    /// Where the point (`x`, `y`) goes.
    func apply(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x + c * y + tx, b * x + d * y + ty)
    }
}
