import Foundation
import ImageFixtures
import ManagedCacheUIKit
import Testing

/// A cut-short download must never be accepted, wherever the cut falls.
@Suite struct TruncatedImageTests {
    /// Whether `error` is what a cut-short file of `format` should produce.
    private func isTruncationError(_ error: ImageValidationError?, of format: ImageFormat) -> Bool {
        error == .empty || error == .truncated(format) || error == .missingEndMarker(format)
    }

    @Test(arguments: RealImageFixture.all)
    func everyPrefixOfARealFileIsRejectedAsCutShort(_ fixture: RealImageFixture) throws {
        let data = try fixture.data()
        // Every cut point: the fixtures are small enough to try them all.
        for cut in 0..<data.count {
            let error = validationError(data.prefix(cut))
            #expect(
                isTruncationError(error, of: fixture.expected.format),
                "Cut at \(cut) of \(data.count) gave \(String(describing: error))"
            )
        }
    }

    @Test func aPNGCutExactlyBeforeIENDIsMissingItsEndMarker() throws {
        for name in ["rgba.png", "palette.png", "animated.png"] {
            let data = try RealImageFixture.named(name)
            #expect(validationError(data.dropLast(12)) == .missingEndMarker(.png))
            #expect(validationError(data.dropLast(1)) == .truncated(.png))
        }
    }

    @Test func aJPEGCutExactlyBeforeEOIIsMissingItsEndMarker() throws {
        for name in ["baseline.jpg", "progressive.jpg"] {
            let data = try RealImageFixture.named(name)
            #expect(validationError(data.dropLast(2)) == .missingEndMarker(.jpeg))
            #expect(validationError(data.dropLast(1)) == .missingEndMarker(.jpeg))
        }
    }

    @Test func aJPEGCutInsideItsHeadersIsTruncated() throws {
        let data = try RealImageFixture.named("baseline.jpg")
        // Byte 30 lies inside the first quantisation table, long before any scan.
        #expect(validationError(data.prefix(30)) == .truncated(.jpeg))
    }

    @Test func aGIFCutExactlyBeforeItsTrailerIsMissingItsEndMarker() throws {
        for name in ["still.gif", "animated.gif"] {
            let data = try RealImageFixture.named(name)
            #expect(validationError(data.dropLast(1)) == .missingEndMarker(.gif))
            #expect(validationError(data.dropLast(2)) == .truncated(.gif))
        }
    }

    @Test func aWebPCutAnywhereIsTruncatedBecauseItsRIFFSizeNoLongerFits() throws {
        for name in ["lossy.webp", "lossy-alpha.webp", "lossless.webp", "animated.webp"] {
            let data = try RealImageFixture.named(name)
            #expect(validationError(data.dropLast(1)) == .truncated(.webp))
            #expect(validationError(data.prefix(12)) == .truncated(.webp))
        }
    }

    @Test func aLargeGeneratedPNGIsRejectedAtASpreadOfCutPoints() {
        // 300 x 200 RGBA spans four stored deflate blocks and about 240 KB.
        let data = ImageFixtureEncoder.patternPNG(width: 300, height: 200, seed: 7)
        let spread = Array(stride(from: 0, to: data.count, by: 997))
        let nearTheEnd = Array((data.count - 40)..<data.count)
        for cut in spread + nearTheEnd {
            let error = validationError(data.prefix(cut))
            #expect(isTruncationError(error, of: .png), "Cut at \(cut) of \(data.count) gave \(String(describing: error))")
        }
    }

    @Test func aLonePrefixOfASignatureIsTruncatedNotUnknown() {
        #expect(validationError(Data([0x89, 0x50, 0x4E])) == .truncated(.png))
        #expect(validationError(Data([0xFF])) == .truncated(.jpeg))
        #expect(validationError(Data([0xFF, 0xD8])) == .truncated(.jpeg))
        #expect(validationError(Data("GIF8".utf8)) == .truncated(.gif))
        #expect(validationError(Data("RIFF".utf8) + Data([1, 2, 3, 4]) + Data("WE".utf8)) == .truncated(.webp))
    }
}
