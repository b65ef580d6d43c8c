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
/// Generic so that the rule is tested on Linux with a stand-in bitmap type.
final class BitmapBox<Pixels: AnyObject & Sendable>: Sendable, Equatable {
    /// The bitmap, immutable.
    let pixels: Pixels

    init(_ pixels: Pixels) {
        self.pixels = pixels
    }

    /// The same box, or boxes of the same bitmap object. Reads no pixel.
    static func == (lhs: BitmapBox, rhs: BitmapBox) -> Bool {
        lhs === rhs || lhs.pixels === rhs.pixels
    }
}
