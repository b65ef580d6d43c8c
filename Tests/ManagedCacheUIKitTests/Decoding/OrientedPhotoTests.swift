import Foundation
import ManagedCacheLocking
import Testing

@testable import ManagedCacheUIKit

/// Photos stored sideways (pixels as the sensor took them, plus an EXIF orientation) are resized
/// and stored upright, for all eight orientations: the plan every Apple drawing follows
/// (`UprightTransform.placing`), the resize a format asks for (`ImageDecoder`), and the encoding
/// that writes a variant (`StoredImageEncoding`). Real JPEGs, tagged here with an EXIF segment.
@Suite struct OrientedPhotoTests {
    /// A JPEG's bytes with an EXIF APP1 segment holding `orientation`, inserted after SOI, in
    /// big-endian ("MM") or little-endian ("II") TIFF byte order.
    static func tagging(_ jpeg: Data, with orientation: ImageOrientation, littleEndian: Bool) -> Data {
        func u16(_ value: Int) -> [UInt8] {
            littleEndian ? [UInt8(value & 0xFF), UInt8(value >> 8)] : [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        func u32(_ value: Int) -> [UInt8] { littleEndian ? u16(value & 0xFFFF) + u16(value >> 16) : u16(value >> 16) + u16(value & 0xFFFF) }
        var tiff: [UInt8] = littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
        tiff += u16(42) + u32(8)  // the magic number, then IFD0 right after the header
        tiff += u16(1)  // one entry: Orientation (0x0112), SHORT (3), count 1, value, padding
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation.rawValue) + [0, 0]
        tiff += u32(0)  // no next IFD
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        var bytes = [UInt8](jpeg)
        bytes.insert(contentsOf: segment, at: 2)  // after SOI (FF D8)
        return Data(bytes)
    }

    /// Where the upright image's point (`u`, `v`) (from its top left) is in the stored pixels
    /// (from their top left), for each orientation. Written from the TIFF 6.0 / EXIF definition
    /// of the tag ("the 0th row represents the visual …, the 0th column the visual …"),
    /// independently of `UprightTransform`.
    static func storedPoint(
        ofUpright u: Double, _ v: Double, orientation: ImageOrientation, upright: PixelSize
    ) -> (x: Double, y: Double) {
        let (w, h) = (Double(upright.width), Double(upright.height))
        switch orientation {
        case .up: return (u, v)  // 0th row top, 0th column left
        case .upMirrored: return (w - u, v)  // top, right
        case .down: return (w - u, h - v)  // bottom, right
        case .downMirrored: return (u, h - v)  // bottom, left
        case .leftMirrored: return (v, u)  // left, top
        case .right: return (v, w - u)  // right, top
        case .rightMirrored: return (h - v, w - u)  // right, bottom
        case .left: return (h - v, u)  // left, bottom
        }
    }

    /// Checks that drawing a bitmap stored `stored` pixels large with `orientation` under
    /// `UprightTransform.placing` puts, at the centre of every canvas pixel inside `rect`, the
    /// stored point that stands there once upright: nothing turned the wrong way, mirrored or
    /// squashed. Returns how many pixels were checked.
    @discardableResult
    static func expectUpright(
        _ orientation: ImageOrientation, stored: PixelSize, rect: PixelRect, canvas: PixelSize,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        let upright = orientation.orientedSize(of: stored)
        let transform = UprightTransform.placing(orientation, stored: stored, in: rect, canvasHeight: canvas.height)
        var checked = 0
        for row in max(0, rect.y)..<min(canvas.height, rect.y + rect.height) {
            for column in max(0, rect.x)..<min(canvas.width, rect.x + rect.width) {
                let (px, py) = (Double(column) + 0.5, Double(row) + 0.5)
                let u = (px - Double(rect.x)) * Double(upright.width) / Double(rect.width)
                let v = (py - Double(rect.y)) * Double(upright.height) / Double(rect.height)
                let source = storedPoint(ofUpright: u, v, orientation: orientation, upright: upright)
                // The stored bitmap is drawn y-up: its point (x, y from the top) is at (x, height − y).
                let drawn = transform.apply(x: source.x, y: Double(stored.height) - source.y)
                let expected = (x: px, y: Double(canvas.height) - py)
                #expect(
                    abs(drawn.x - expected.x) < 1e-9 && abs(drawn.y - expected.y) < 1e-9,
                    "\(orientation) at canvas (\(column), \(row)): drawn at \(drawn), expected \(expected)",
                    sourceLocation: sourceLocation)
                checked += 1
            }
        }
        return checked
    }

    @Test(arguments: ImageOrientation.allCases)
    func everyPixelOfAStoredBitmapLandsWhereItStandsUpright(orientation: ImageOrientation) {
        // A 5 × 3 upright picture (odd sides: no symmetry hides a swap), drawn at its own size.
        let upright = PixelSize(width: 5, height: 3)
        let stored = orientation.orientedSize(of: upright)
        let full = PixelRect(x: 0, y: 0, width: 5, height: 3)
        #expect(Self.expectUpright(orientation, stored: stored, rect: full, canvas: upright) == 15)
        // Resized as a format does it: aspect-fill into 4 × 4 draws 7 × 4 (rounded from 6.67 × 4)
        // centred, cropped left and right; every canvas pixel still shows the upright picture.
        let plan = ImageResizePlan(source: upright, target: PixelSize(width: 4, height: 4), scaleMode: .aspectFill, allowsUpscaling: true)
        #expect(plan.canvasSize == PixelSize(width: 4, height: 4))
        #expect(Self.expectUpright(orientation, stored: stored, rect: plan.drawRect, canvas: plan.canvasSize) == 16)
    }

    @Test(arguments: ImageOrientation.allCases, [false, true])
    func aTaggedJPEGIsPlannedResizedAndStoredUpright(orientation: ImageOrientation, littleEndian: Bool) throws {
        // baseline.jpg: 64 × 48 stored pixels.
        let data = Self.tagging(try RealImageFixture.named("baseline.jpg"), with: orientation, littleEndian: littleEndian)
        let info = try ImageValidator.validate(data)
        #expect(info.orientation == orientation)
        #expect(PixelSize(width: info.pixelWidth, height: info.pixelHeight) == PixelSize(width: 64, height: 48))
        let upright = orientation.swapsDimensions ? PixelSize(width: 48, height: 64) : PixelSize(width: 64, height: 48)
        #expect(info.orientedPixelSize == upright)

        // A backend that keeps the stored pixels (as a `UIImage` from the camera does) and draws
        // each resize as the Apple backend does.
        let backend = StoredPixelsBackend()
        let format = ImageCacheFormat(name: "fit", size: PixelSize(width: 32, height: 32), scaleMode: .aspectFit)
        let decoder = ImageDecoder(format: format, backend: backend)
        let image = try decoder.decodeImage(data)

        let resize = try #require(backend.resizes.first)
        #expect(backend.resizes.count == 1)
        #expect(resize.orientation == orientation)
        #expect(resize.sourceSize == upright, "the plan is made from the upright size")
        let expectedCanvas = orientation.swapsDimensions ? PixelSize(width: 24, height: 32) : PixelSize(width: 32, height: 24)
        #expect(resize.plan.canvasSize == expectedCanvas, "portrait stays portrait: not squashed into a landscape canvas")
        #expect(
            Self.expectUpright(
                orientation, stored: orientation.orientedSize(of: upright), rect: resize.plan.drawRect,
                canvas: resize.plan.canvasSize) == 32 * 24)
        #expect(image.orientation == .up && image.pixelSize == expectedCanvas)
        // The resized variant is upright and opaque: stored as JPEG, with nothing to turn.
        let encoding = StoredImageEncoding(for: image)
        #expect(encoding.container == .jpeg)
        #expect(encoding.uprightRedraw == nil)
    }

    @Test(arguments: ImageOrientation.allCases)
    func anImageStoredSidewaysIsDrawnUprightBeforeItIsEncoded(orientation: ImageOrientation) throws {
        // What `storeImage` receives for a camera photo: stored pixels and their orientation.
        let data = Self.tagging(try RealImageFixture.named("baseline.jpg"), with: orientation, littleEndian: false)
        let image = DecodedImage(storedAs: try ImageValidator.validate(data), encodedData: data)
        #expect(image.orientation == orientation)
        let encoding = StoredImageEncoding(for: image)
        #expect(encoding.container == .jpeg)
        guard orientation != .up else {
            #expect(encoding.uprightRedraw == nil)
            return
        }
        let redraw = try #require(encoding.uprightRedraw)
        // The whole image, at its upright size, drawn upright: the file holds upright pixels, so a
        // decode from the file cache after a relaunch shows it upright.
        let upright = image.pixelSize
        #expect(redraw.canvasSize == upright)
        #expect(redraw.drawRect == PixelRect(x: 0, y: 0, width: upright.width, height: upright.height))
        #expect(redraw.clip == .none)
        #expect(
            Self.expectUpright(
                orientation, stored: orientation.orientedSize(of: upright), rect: redraw.drawRect, canvas: upright)
                == 64 * 48)
    }
}

/// A pixel backend that keeps the stored pixels and their orientation (as an image wrapped from
/// a camera `UIImage` does), records every resize it is asked for, and makes an upright image of
/// the plan's canvas, as the Apple backend does.
private final class StoredPixelsBackend: ImageDecoding {
    struct Resize: Sendable {
        var orientation: ImageOrientation
        var sourceSize: PixelSize
        var plan: ImageResizePlan
    }

    private let recorded = Lock<[Resize]>([])

    var resizes: [Resize] { recorded.withLock { $0 } }
    var canTransformPixels: Bool { true }

    func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage {
        DecodedImage(storedAs: info, encodedData: data)
    }

    func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage? {
        recorded.withLock { $0.append(Resize(orientation: image.orientation, sourceSize: image.pixelSize, plan: plan)) }
        let info = ImageInfo(format: image.format ?? .png, pixelWidth: plan.canvasSize.width, pixelHeight: plan.canvasSize.height)
        return DecodedImage(info: info, encodedData: nil, transformations: image.transformations)
    }
}
