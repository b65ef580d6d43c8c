/// The bytes a decoded bitmap occupies: its rows times the bytes of each row, row padding and
/// 16-bit or float components included.
///
/// The one rule behind ``DecodedImage/decodedByteCount``, an animation's frame budget
/// (`AnimationFrameBudget`, from the first frame's count) and what its frame buffer charges for
/// each frame it keeps (`AnimatedFrames`, from each frame's count): all three count the same
/// bytes, so a budget that says "every frame fits" is one the buffer keeps, and a small
/// animation is decoded once however long it loops.
enum BitmapFootprint {
    /// `bytesPerRow × rows`, saturating at `Int.max`; 0 for an empty bitmap.
    ///
    /// - Parameters:
    ///   - bytesPerRow: The bytes of one row as the bitmap lays them out (its padding included).
    ///   - rows: The bitmap's height in pixels, as stored.
    static func byteCount(bytesPerRow: Int, rows: Int) -> Int {
        guard bytesPerRow > 0, rows > 0 else { return 0 }
        let (bytes, overflow) = bytesPerRow.multipliedReportingOverflow(by: rows)
        return overflow ? Int.max : bytes
    }

    /// The bytes of one row of an unpadded 8-bit RGBA bitmap `width` pixels wide: what an image
    /// without a bitmap (Linux, or an image only validated) is counted as, since it has no row
    /// layout of its own.
    static func rgba8BytesPerRow(width: Int) -> Int {
        guard width > 0 else { return 0 }
        let (bytes, overflow) = width.multipliedReportingOverflow(by: 4)
        return overflow ? Int.max : bytes
    }
}
