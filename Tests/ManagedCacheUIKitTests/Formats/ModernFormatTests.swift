import Foundation
import Testing

@testable import ManagedCacheUIKit

/// AVIF and HEIC: recognised by their `ftyp` brands on every platform, decoded where a platform
/// decoder reads them, a typed "unsupported format" where nothing does (Linux). The fixtures are
/// real files made by libavif and libheif (Fixtures/make_modern_fixtures.py).
@Suite struct ModernFormatTests {
    private func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    /// A `ftyp` box: major brand, minor version 0, then the compatible brands.
    private func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, UInt8(size >> 8), UInt8(size & 0xFF)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0]
            + compatible.flatMap { Array($0.utf8) }
    }

    @Test(arguments: [
        ("avif", ["mif1", "miaf"], ImageFormat.avif, false),
        ("avis", ["avif", "msf1"], .avif, true),
        ("mif1", ["avif"], .avif, false),
        ("heic", ["mif1", "heic"], .heic, false),
        ("heix", ["mif1"], .heic, false),
        ("msf1", ["hevc"], .heic, true),
        ("hevc", ["msf1"], .heic, true),
        ("mif1", ["miaf"], .heic, false),
        ("msf1", [], .heic, true),
    ])
    func brandsNameTheFormat(major: String, compatible: [String], format: ImageFormat, isSequence: Bool) {
        let recognised = ISOBaseMediaBrands.recognise(ftyp(major, compatible))
        #expect(recognised == ISOBaseMediaBrands.Recognised(format: format, isSequence: isSequence))
        #expect(ImageValidator.detectFormat(Data(ftyp(major, compatible))) == format)
    }

    @Test func otherISOFilesAndBrokenBoxesAreNotImages() {
        #expect(ISOBaseMediaBrands.recognise(ftyp("isom", ["iso2", "mp41"])) == nil, "an MP4 video")
        #expect(ISOBaseMediaBrands.recognise(ftyp("qt  ", [])) == nil, "a QuickTime movie")
        var tooSmall = ftyp("avif", [])
        tooSmall[3] = 8  // a box smaller than its own header
        #expect(ISOBaseMediaBrands.recognise(tooSmall) == nil)
        #expect(ISOBaseMediaBrands.recognise(Array(ftyp("avif", []).prefix(12))) == nil, "cut before the minor version")
        var notFtyp = ftyp("avif", [])
        notFtyp[4] = UInt8(ascii: "m")  // `mtyp`
        #expect(ISOBaseMediaBrands.recognise(notFtyp) == nil)
    }

    @Test func aCompatibleBrandBeyondTheBoxIsNotRead() {
        // The box declares 16 bytes (no compatible brands); `avif` follows it, in the next box.
        var bytes = ftyp("mif1", [])
        bytes += Array("avif".utf8)
        #expect(ISOBaseMediaBrands.recognise(bytes)?.format == .heic)
    }

    @Test func realFilesAreRecognised() throws {
        #expect(ImageValidator.detectFormat(try fixture("still.avif")) == .avif)
        #expect(ImageValidator.detectFormat(try fixture("still.heic")) == .heic)
        let sequence = ISOBaseMediaBrands.recognise([UInt8](try fixture("animated.avif").prefix(ISOBaseMediaBrands.headLength)))
        #expect(sequence == ISOBaseMediaBrands.Recognised(format: .avif, isSequence: true))
    }

    @Test func routeOfEachFormat() {
        typealias Route = ImageFormatSupport.Route
        let table: [(detected: ImageFormat?, reads: Set<ImageFormat>, hasDecoder: Bool, route: Route)] = [
            (.png, [], false, .structural(.png)),
            (.png, [.png, .avif], true, .structural(.png)),
            (.avif, [.heic, .avif], true, .platformDecoder),
            (.avif, [.heic], true, .unsupported(.avif)),  // ImageIO before iOS 16 / macOS 13
            (.heic, [.heic], true, .platformDecoder),
            (.heic, [], false, .unsupported(.heic)),  // Linux
            (.avif, [], false, .unsupported(.avif)),
            (nil, [.tiff], true, .platformDecoder),  // TIFF, BMP: ImageIO judges
            (nil, [], false, .unknown),
        ]
        for row in table {
            let route = ImageFormatSupport.route(for: row.detected, platformReads: row.reads, hasPlatformDecoder: row.hasDecoder)
            #expect(route == row.route, "\(String(describing: row.detected)) reading \(row.reads)")
        }
    }

    @Test func withoutAPlatformDecoderAVIFAndHEICAreATypedUnsupportedFormat() throws {
        let structural = ImageDecoder(backend: StructuralImageDecoding())
        #expect(throws: ImageDecodingError.unsupportedFormat(.avif)) { try structural.decodeImage(try fixture("still.avif")) }
        #expect(throws: ImageDecodingError.unsupportedFormat(.avif)) { try structural.decodeImage(try fixture("animated.avif")) }
        #expect(throws: ImageDecodingError.unsupportedFormat(.heic)) { try structural.decodeImage(try fixture("still.heic")) }
        #expect(ImageDecodingError.unsupportedFormat(.avif).description == "The image is AVIF, which this platform cannot decode.")
        // Still not structurally validated: `validate` knows PNG, JPEG, GIF and WebP only.
        #expect(throws: ImageValidationError.unknownFormat) { try ImageValidator.validate(try fixture("still.avif")) }
    }

    @Test func heicSequenceTimingFollowsTheRulesOfEveryFormat() throws {
        typealias Frame = ImageSequenceTiming.Frame
        let timing = ImageSequenceTiming(
            frames: [
                Frame(unclampedDelay: 0.05, delay: 0.1), Frame(unclampedDelay: nil, delay: 0.2), Frame(unclampedDelay: 0, delay: nil),
            ],
            loopCount: 3)
        let animation = try #require(timing.animation)
        // Unclamped first, then the clamped delay, and a frame without either plays at 100 ms.
        #expect(animation.frameDurations == [0.05, 0.2, AnimationInfo.clampedFrameDuration])
        #expect(animation.loopCount == .times(3))
        #expect(ImageSequenceTiming(frames: timing.frames, loopCount: 0).animation?.loopCount == .forever)
        #expect(ImageSequenceTiming(frames: timing.frames, loopCount: nil).animation?.loopCount == .forever)
        #expect(ImageSequenceTiming(frames: [Frame(unclampedDelay: 0.1, delay: 0.1)], loopCount: nil).animation == nil)
    }

    @Test(arguments: [
        (ImageDynamicRange.standard, true, ImageDynamicRange.DecodeRequest?.some(.toSDR)),
        (.high, true, .toHDR),
        (.standard, false, nil),
        (.high, false, nil),
    ])
    func hdrIsDecodedOnlyWhenAskedForAndAvailable(range: ImageDynamicRange, available: Bool, expected: ImageDynamicRange.DecodeRequest?) {
        #expect(range.decodeRequest(systemTakesDecodeRequests: available) == expected)
    }
}
