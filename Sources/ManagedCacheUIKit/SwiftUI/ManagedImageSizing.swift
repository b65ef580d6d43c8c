/// How big a ``ManagedImage`` is for the size its parent proposes, and which variant of the image
/// it asks for once placed: the one sizing decision behind the SwiftUI view, platform-neutral and
/// tested on Linux as a table. The view's layout container only passes SwiftUI's proposal and
/// placement through.
///
/// It sizes like `AsyncImage` showing `Image(…).resizable().aspectRatio(contentMode:)`:
///
/// | proposal (width, height) | size |
/// | --- | --- |
/// | both unspecified (`nil` or infinite) | the image's ideal size (its pixels at the display scale) |
/// | one side given | that side, the other from the image's aspect ratio |
/// | both given, `.aspectFill` or `.fill` | the proposal (the content fills and is clipped) |
/// | both given, `.aspectFit` | the largest size of the image's aspect ratio inside it |
///
/// Before the image is known (the placeholder, a failure) the view is square on the sides the
/// proposal leaves open, ``placeholderSide`` points when it leaves both open, so a `ScrollView` or
/// `LazyVStack` row never collapses. A `.frame(…)` or `.aspectRatio(…)` around the view is a
/// proposal like any other: it is honoured.
///
/// The variant asked for is that of the size the view is placed at, in pixels. A side the
/// proposal left open (a row of a vertical stack has no proposed height) is not bounded by the
/// placed size, which comes from the image itself: it is ``unboundedPixelSide`` and the image is
/// fitted (`.aspectFit`) into that box, so the request is the same before and after the image
/// arrives and one image is loaded once, at the width it is shown.
struct ManagedImageSizing: Sendable, Hashable {
    /// A size in points.
    struct Size: Sendable, Hashable {
        var width: Double
        var height: Double
    }

    /// A parent's proposal in points: `nil` for a side left to the view (its ideal size); an
    /// infinite side asks for the view's largest size, which for an image is its ideal one too.
    struct Proposal: Sendable, Hashable {
        var width: Double?
        var height: Double?

        /// The side if it is given and finite, else `nil`.
        fileprivate static func given(_ side: Double?) -> Double? {
            guard let side, side.isFinite else { return nil }
            return max(0, side)
        }
    }

    /// The variant a placed view asks for: the box in pixels and how the image fills it.
    struct Variant: Sendable, Hashable {
        var pixelBox: PixelSize
        var scaleMode: ImageScaleMode
    }

    /// The ideal side, in points, of a view whose image is not known yet when the proposal leaves
    /// both sides open.
    static let placeholderSide = 64.0
    /// The side, in pixels, of a variant's box on a side the proposal left open: the largest
    /// texture side of current Apple GPUs, so the image is never bounded there in practice.
    static let unboundedPixelSide = 16_384

    /// How the image fills a view whose proposal gives both sides.
    var scaleMode: ImageScaleMode

    /// The size the view takes for `proposal`.
    ///
    /// - Parameters:
    ///   - proposal: The parent's proposal.
    ///   - imageSize: The image's ideal size in points (its pixels over the display scale), or
    ///     `nil` before it is known; a side of zero counts as unknown.
    /// - Returns: The view's size.
    func size(for proposal: Proposal, imageSize: Size?) -> Size {
        let ideal = idealSize(imageSize)
        let aspect = ideal.width / ideal.height
        switch (Proposal.given(proposal.width), Proposal.given(proposal.height)) {
        case (nil, nil):
            return ideal
        case (let width?, nil):
            return Size(width: width, height: width / aspect)
        case (nil, let height?):
            return Size(width: height * aspect, height: height)
        case (let width?, let height?):
            guard scaleMode == .aspectFit else { return Size(width: width, height: height) }
            return width / height > aspect
                ? Size(width: height * aspect, height: height) : Size(width: width, height: width / aspect)
        }
    }

    /// The variant a view placed at `placedSize` for `proposal` asks for.
    ///
    /// - Parameters:
    ///   - proposal: The proposal the view's size was made from.
    ///   - placedSize: The size it is placed at, in points.
    ///   - scale: Pixels per point (the display scale).
    /// - Returns: The box and scale mode, or `nil` while the view has no area or the scale is
    ///   unknown (it waits instead of decoding at full size).
    func variant(for proposal: Proposal, placedSize: Size, scale: Double) -> Variant? {
        let layout = LayoutSizing()
        guard let placed = layout.pixelSize(width: placedSize.width, height: placedSize.height, scale: scale) else {
            return nil
        }
        let widthGiven = Proposal.given(proposal.width) != nil
        let heightGiven = Proposal.given(proposal.height) != nil
        let box = PixelSize(
            width: widthGiven ? placed.width : Self.unboundedPixelSide,
            height: heightGiven ? placed.height : Self.unboundedPixelSide)
        return Variant(pixelBox: box, scaleMode: widthGiven && heightGiven ? scaleMode : .aspectFit)
    }

    /// The image's ideal size, or the placeholder's.
    private func idealSize(_ imageSize: Size?) -> Size {
        guard let imageSize, imageSize.width > 0, imageSize.height > 0, imageSize.width.isFinite, imageSize.height.isFinite
        else {
            return Size(width: Self.placeholderSide, height: Self.placeholderSide)
        }
        return imageSize
    }
}
