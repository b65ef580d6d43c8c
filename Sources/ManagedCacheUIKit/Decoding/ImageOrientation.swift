/// The EXIF orientation of a photo (TIFF tag 0x0112): how the stored pixels must be turned to
/// stand upright. Cameras store portrait photos as landscape pixels with orientation 6 or 8.
///
/// Orientations 5–8 swap width and height: a resize plan, a downsample target or a cost must be
/// computed from ``orientedSize(of:)``, the size the user sees.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    /// 1: as stored.
    case up = 1
    /// 2: mirrored left to right.
    case upMirrored = 2
    /// 3: turned 180°.
    case down = 3
    /// 4: mirrored top to bottom.
    case downMirrored = 4
    /// 5: mirrored along the top-left to bottom-right diagonal.
    case leftMirrored = 5
    /// 6: turned 90° clockwise to stand upright (a portrait photo from most phones).
    case right = 6
    /// 7: mirrored along the other diagonal.
    case rightMirrored = 7
    /// 8: turned 90° counter-clockwise to stand upright.
    case left = 8

    /// Whether standing the image upright swaps its width and height (5–8).
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The size of stored pixels once upright.
    ///
    /// - Parameter stored: The size as stored in the file.
    /// - Returns: `stored`, with width and height swapped for orientations 5–8.
    public func orientedSize(of stored: PixelSize) -> PixelSize {
        swapsDimensions ? PixelSize(width: stored.height, height: stored.width) : stored
    }

    /// The orientation tag of an EXIF block (a JPEG APP1 payload: `Exif\0\0` then a TIFF header
    /// and IFD0), or `nil` when there is none or the block is malformed. Never reads outside
    /// `payload`.
    static func exif(_ payload: UnsafeRawBufferPointer) -> ImageOrientation? {
        let header: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
        guard payload.count >= 6 + 8, header.indices.allSatisfy({ payload[$0] == header[$0] }) else { return nil }
        let tiff = UnsafeRawBufferPointer(rebasing: payload[6...])
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true  // "II"
        case (0x4D, 0x4D): littleEndian = false  // "MM"
        default: return nil
        }
        func uint16(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 2 <= tiff.count else { return nil }
            let (a, b) = (Int(tiff[offset]), Int(tiff[offset + 1]))
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func uint32(_ offset: Int) -> Int? {
            guard let low = uint16(littleEndian ? offset : offset + 2),
                let high = uint16(littleEndian ? offset + 2 : offset)
            else { return nil }
            return low | high << 16
        }
        guard uint16(2) == 42, let ifd = uint32(4), let entries = uint16(ifd) else { return nil }
        for index in 0..<min(entries, 1_000) {
            let entry = ifd + 2 + index * 12
            guard let tag = uint16(entry) else { return nil }
            guard tag == 0x0112 else { continue }
            // Type SHORT (3), count 1: the value sits in the first two bytes of the value field.
            guard uint16(entry + 2) == 3, let value = uint16(entry + 8) else { return nil }
            return ImageOrientation(rawValue: value)
        }
        return nil
    }
}
