/// The affine transform that draws a bitmap stored with an EXIF orientation upright: maps the
/// bitmap drawn at the origin (in a y-up space, as Core Graphics draws) onto the upright image at
/// the origin. `x' = a·x + c·y + tx`, `y' = b·x + d·y + ty`, Core Graphics' convention.
///
/// Platform-neutral, so the eight cases are tested on Linux. Every Apple drawing of a bitmap
/// (a processor's redraw, the blur, a format's resize, the upright copy drawn before a variant
/// is encoded) hands ``placing(_:stored:in:canvasHeight:)`` to Core Graphics, so an image that is
/// not stored upright (a camera photo wrapped from a `UIImage` with its orientation) comes out
/// upright and unsquashed.
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

    private init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }

    /// The whole drawing of a bitmap stored `stored` pixels large with `orientation`: drawn at
    /// (0, 0, stored width, stored height) under this transform, it stands upright and fills
    /// `rect` (measured from the canvas's top left, as plans are) of a canvas `canvasHeight`
    /// pixels tall, in Core Graphics' y-up canvas space.
    ///
    /// The upright image is scaled to `rect` in each direction: a plan made from the upright
    /// size (every `ImageResizePlan` and `RedrawPlan` is) keeps the proportions.
    static func placing(_ orientation: ImageOrientation, stored: PixelSize, in rect: PixelRect, canvasHeight: Int) -> UprightTransform {
        let upright = orientation.orientedSize(of: stored)
        let upstanding = UprightTransform(orientation, upright: upright)
        let scaleX = Double(rect.width) / Double(max(1, upright.width))
        let scaleY = Double(rect.height) / Double(max(1, upright.height))
        // The plan measures from the top left; Core Graphics from the bottom left.
        let flippedY = Double(canvasHeight - rect.y - rect.height)
        return UprightTransform(
            a: scaleX * upstanding.a, b: scaleY * upstanding.b, c: scaleX * upstanding.c, d: scaleY * upstanding.d,
            tx: scaleX * upstanding.tx + Double(rect.x), ty: scaleY * upstanding.ty + flippedY)
    }

    /// Where the point (`x`, `y`) goes.
    func apply(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x + c * y + tx, b * x + d * y + ty)
    }
}
