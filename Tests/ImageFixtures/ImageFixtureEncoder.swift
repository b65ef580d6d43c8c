import Foundation
import ManagedCache

/// Writes valid images with nothing but Swift, for tests and for examples that must make their
/// own pictures at run time.
///
/// The PNGs are 8-bit RGBA, non-interlaced, with no row filtering and their zlib stream made of
/// "stored" (uncompressed) deflate blocks, so they are large but quick to produce and readable
/// by every PNG decoder.
///
/// ```swift
/// let avatar = ImageFixtureEncoder.patternPNG(width: 128, height: 128, seed: user.id)
/// let red = ImageFixtureEncoder.png(width: 4, height: 4) { _, _ in (255, 0, 0, 255) }
/// ```
public enum ImageFixtureEncoder {
    /// The most bytes one stored deflate block can hold.
    private static let storedBlockCapacity = 65_535

    /// A valid PNG whose pixel at column `x`, row `y` (from the top left) is the
    /// `(red, green, blue, alpha)` that `pixel(x, y)` returns.
    ///
    /// `pixel` is called exactly once per pixel, row by row, and not kept after the call.
    /// - Precondition: `width` and `height` are positive.
    public static func png(
        width: Int,
        height: Int,
        pixel: (_ x: Int, _ y: Int) -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8)
    ) -> Data {
        precondition(width > 0 && height > 0, "A PNG needs a positive width and height")
        let scanlines = rgbaScanlines(width: width, height: height, pixel: pixel)

        let blockCount = (scanlines.count + storedBlockCapacity - 1) / storedBlockCapacity
        // zlib header, then a 5-byte header per stored block, the data, and the Adler-32.
        let zlibLength = 2 + 5 * blockCount + scanlines.count + 4
        var png: [UInt8] = []
        png.reserveCapacity(8 + (12 + 13) + (12 + zlibLength) + 12)
        png += [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

        var header: [UInt8] = []
        appendBigEndian(UInt32(width), to: &header)
        appendBigEndian(UInt32(height), to: &header)
        header += [8, 6, 0, 0, 0]  // 8 bits per sample, RGBA, deflate, no filter, no interlace
        appendChunk("IHDR", to: &png) { $0 += header }

        appendChunk("IDAT", to: &png) { data in
            data += [0x78, 0x01]  // deflate with a 32 KiB window, no preset dictionary, "fastest"
            var start = 0
            repeat {
                let length = min(storedBlockCapacity, scanlines.count - start)
                let isFinal = start + length == scanlines.count
                data.append(isFinal ? 0x01 : 0x00)  // BFINAL bit, BTYPE 00 (stored)
                data += [UInt8(length & 0xFF), UInt8(length >> 8)]
                data += [UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
                data += scanlines[start..<(start + length)]
                start += length
            } while start < scanlines.count
            var adler = Adler32()
            scanlines.withUnsafeBytes { adler.update($0) }
            appendBigEndian(adler.value, to: &data)
        }
        appendChunk("IEND", to: &png) { _ in }
        return Data(png)
    }

    /// A PNG painted with a gradient, radial, striped or checkerboard pattern in two colours,
    /// all chosen by `seed`, so that every generated avatar looks different. Equal arguments
    /// give identical bytes.
    /// - Precondition: `width` and `height` are positive.
    public static func patternPNG(width: Int, height: Int, seed: Int) -> Data {
        let pattern = FixturePattern(seed: seed)
        return png(width: width, height: height) { x, y in
            pattern.color(x: x, y: y, width: width, height: height)
        }
    }

    /// The raw image data: each row is a filter-type byte (0, none) then RGBA samples.
    private static func rgbaScanlines(
        width: Int,
        height: Int,
        pixel: (Int, Int) -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8)
    ) -> [UInt8] {
        let rowLength = 1 + 4 * width
        return [UInt8](unsafeUninitializedCapacity: rowLength * height) { buffer, initializedCount in
            var index = 0
            for y in 0..<height {
                buffer[index] = 0
                index += 1
                for x in 0..<width {
                    let color = pixel(x, y)
                    buffer[index] = color.red
                    buffer[index + 1] = color.green
                    buffer[index + 2] = color.blue
                    buffer[index + 3] = color.alpha
                    index += 4
                }
            }
            initializedCount = index
        }
    }

    /// Appends a chunk whose data `writeData` appends, filling in its length and CRC.
    private static func appendChunk(_ type: String, to png: inout [UInt8], writeData: (inout [UInt8]) -> Void) {
        let lengthOffset = png.count
        png += [0, 0, 0, 0]
        png += Array(type.utf8)
        writeData(&png)
        let dataLength = png.count - lengthOffset - 8
        png.replaceSubrange(lengthOffset..<(lengthOffset + 4), with: bigEndianBytes(UInt32(dataLength)))
        let checksum = CRC32.checksum(png[(lengthOffset + 4)...])
        appendBigEndian(checksum, to: &png)
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += bigEndianBytes(value)
    }

    private static func bigEndianBytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
