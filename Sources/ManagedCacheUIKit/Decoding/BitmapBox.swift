/// Holds a decoded bitmap inside a ``DecodedImage`` (on Apple platforms a `CGImage`:
/// `PlatformBitmap`), and says when two images show the same bitmap.
///
/// Equality is identity, never pixels: two boxes are equal when they are one box or hold one
/// bitmap object. Comparing pixels would copy both bitmaps (`CGImage.dataProvider.data` returns a
/// copy) on whichever thread compares, and image views and the SwiftUI model compare images on
/// the main thread each time a load delivers one. So copies of one decoded image (what the
/// memory cache shares with every user) are equal, and two decodes of the same bytes are not:
/// a view that shows the earlier decode takes the later one when it is delivered (a row coming
/// back after a memory warning), and the earlier bitmap's memory is freed instead of being kept
/// beside the cache's.
///
/// The box also says where the pixels live (`provenance`), which decides whether a frame may be
/// handed to UIKit as it is (`AnimationFrameHandoff`).
///
/// Generic so that the rules are tested on Linux with a stand-in bitmap type.
final class BitmapBox<Pixels: AnyObject & Sendable>: Sendable, Equatable {
    /// The bitmap, immutable.
    let pixels: Pixels
    /// Where its pixels live.
    let provenance: BitmapProvenance

    init(_ pixels: Pixels, provenance: BitmapProvenance = .supplied) {
        self.pixels = pixels
        self.provenance = provenance
    }

    /// The same box, or boxes of the same bitmap object. Reads no pixel.
    static func == (lhs: BitmapBox, rhs: BitmapBox) -> Bool {
        lhs === rhs || lhs.pixels === rhs.pixels
    }
}

/// Where a bitmap's pixels live.
enum BitmapProvenance: Sendable, Hashable, CaseIterable {
    /// Drawn by the package into a bitmap context of its own (a resize, a processor, a copy): the
    /// image owns its pixels and reads nothing else.
    case drawn
    /// Made by an image source (ImageIO's `CGImageSourceCreate…AtIndex`): the image may keep a
    /// reference to its source and read the source's bytes lazily, on whichever thread draws it.
    case imageSource
    /// Given by the app or made by a processor of the app's (`DecodedImage(cgImage:)`): where its
    /// pixels live is unknown; it may share an image source's pixels (a `cropping(to:)` of one).
    case supplied
}
