import Foundation
import ImageFixtures
import ManagedCacheUIKit
import Testing

/// Corrupt, inconsistent or foreign bytes must be rejected with the case that explains why.
@Suite struct CorruptImageTests {
    @Test(arguments: ["rgba.png", "palette.png", "animated.png"])
    func aFlippedByteInsideAPNGChunkIsAChecksumMismatchNamingTheChunk(_ name: String) throws {
        let original = try RealImageFixture.named(name)
        for chunk in PNGChunkList(original).chunks {
            // The first, middle and last data bytes, and the last byte of the stored CRC.
            let dataStart = chunk.fileOffset + 8
            var positions = [dataStart + chunk.data.count + 3]
            if !chunk.data.isEmpty {
                positions += [dataStart, dataStart + chunk.data.count / 2, dataStart + chunk.data.count - 1]
            }
            for position in positions {
                var corrupted = original
                corrupted[position] ^= 0x10
                #expect(validationError(corrupted) == .checksumMismatch(.png, chunk: chunk.type), "byte \(position)")
            }
        }
    }

    @Test(arguments: RealImageFixture.all.filter { $0.expected.format == .png })
    func everySingleByteCorruptionOfAPNGIsRejected(_ fixture: RealImageFixture) throws {
        let original = try fixture.data()
        for position in 0..<original.count {
            for mask: UInt8 in [0x01, 0x80] {
                var corrupted = original
                corrupted[position] ^= mask
                #expect(validationError(corrupted) != nil, "byte \(position) ^ \(mask) was accepted")
            }
        }
    }

    @Test func aJPEGWithoutEOIIsMissingItsEndMarker() throws {
        var data = try RealImageFixture.named("progressive.jpg")
        // Replace EOI by bytes that look like more scan data.
        data[data.count - 2] = 0x12
        data[data.count - 1] = 0x34
        #expect(validationError(data) == .missingEndMarker(.jpeg))
    }

    @Test func aGIFWithoutTrailerIsMissingItsEndMarker() throws {
        let data = try RealImageFixture.named("animated.gif")
        #expect(data.last == 0x3B)
        #expect(validationError(data.dropLast()) == .missingEndMarker(.gif))
    }

    @Test(arguments: RealImageFixture.all.filter { $0.expected.format == .webp })
    func aWebPWhoseRIFFSizeExceedsTheDataIsTruncated(_ fixture: RealImageFixture) throws {
        var data = try fixture.data()
        data[data.startIndex + 4] &+= 2
        #expect(validationError(data) == .truncated(.webp))
    }

    @Test(arguments: RealImageFixture.all.filter { $0.expected.format == .webp })
    func aWebPWhoseRIFFSizeCutsItsLastChunkIsMalformed(_ fixture: RealImageFixture) throws {
        var data = try fixture.data()
        data[data.startIndex + 4] &-= 2
        guard case .malformed(.webp, _)? = validationError(data) else {
            Issue.record("expected malformed, got \(String(describing: validationError(data)))")
            return
        }
    }

    @Test func emptyDataIsRejectedAsEmpty() {
        #expect(validationError(Data()) == .empty)
        #expect(ImageValidator.detectFormat(Data()) == nil)
    }

    @Test func randomGarbageIsRejectedAsAnUnknownFormat() {
        var generator = SeededGenerator(seed: 42)
        for length in [1, 2, 7, 12, 64, 1000, 20_000] {
            for _ in 0..<20 {
                var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                // Avoid the four leading bytes that start a real signature.
                if [0x89, 0xFF, 0x47, 0x52].contains(bytes[0]) { bytes[0] = 0x00 }
                #expect(validationError(Data(bytes)) == .unknownFormat)
                #expect(ImageValidator.detectFormat(Data(bytes)) == nil)
            }
        }
    }

    @Test(arguments: RealImageFixture.all)
    func aRealSignatureFollowedByGarbageIsRejected(_ fixture: RealImageFixture) throws {
        let real = try fixture.data()
        var generator = SeededGenerator(seed: UInt64(real.count))
        let signatureLength = fixture.expected.format == .webp ? 12 : 8
        for length in [0, 1, 10, 100, 3000] {
            let garbage = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let data = real.prefix(signatureLength) + garbage
            #expect(ImageValidator.detectFormat(data) == fixture.expected.format)
            #expect(validationError(data) != nil, "signature + \(length) random bytes was accepted")
        }
    }

    @Test func aPNGDeclaringZeroWidthHasInvalidDimensions() {
        var png = PNGChunkList(ImageFixtureEncoder.patternPNG(width: 4, height: 4, seed: 1))
        png.chunks[0].data.replaceSubrange(0..<4, with: [0, 0, 0, 0])
        #expect(validationError(png.data) == .invalidDimensions(.png))
    }

    @Test func aPNGWithoutImageDataOrWithAnUnknownCriticalChunkIsMalformed() {
        let original = PNGChunkList(ImageFixtureEncoder.patternPNG(width: 4, height: 4, seed: 1))
        var withoutData = original
        withoutData.chunks.removeAll { $0.type == "IDAT" }
        var withUnknownCritical = original
        withUnknownCritical.chunks.insert(.init(type: "ZZZZ", data: [1], fileOffset: 0), at: 1)
        var withUnknownAncillary = original
        withUnknownAncillary.chunks.insert(.init(type: "zzZz", data: [1], fileOffset: 0), at: 1)
        var iendFirst = original
        iendFirst.chunks.swapAt(0, 2)
        for list in [withoutData, withUnknownCritical, iendFirst] {
            guard case .malformed(.png, _)? = validationError(list.data) else {
                Issue.record("expected malformed, got \(String(describing: validationError(list.data)))")
                continue
            }
        }
        #expect(validationError(withUnknownAncillary.data) == nil)
    }

    @Test func anAnimatedPNGWhoseFrameCountDisagreesWithItsFramesIsMalformed() throws {
        var png = PNGChunkList(try RealImageFixture.named("animated.png"))
        let control = try #require(png.chunks.firstIndex { $0.type == "acTL" })
        png.chunks[control].data.replaceSubrange(0..<4, with: [0, 0, 0, 4])
        guard case .malformed(.png, _)? = validationError(png.data) else {
            Issue.record("expected malformed, got \(String(describing: validationError(png.data)))")
            return
        }
    }

    @Test func aGIFDeclaringZeroHeightHasInvalidDimensions() throws {
        var data = try RealImageFixture.named("still.gif")
        data[8] = 0
        data[9] = 0
        #expect(validationError(data) == .invalidDimensions(.gif))
    }

    @Test func aJPEGFrameHeaderDeclaringZeroWidthHasInvalidDimensions() throws {
        var data = try RealImageFixture.named("baseline.jpg")
        let frameHeader = try #require(data.indices.first { data[$0] == 0xFF && data[$0 + 1] == 0xC0 })
        // FFC0, length (2), precision (1), height (2), then the width.
        data[frameHeader + 7] = 0
        data[frameHeader + 8] = 0
        #expect(validationError(data) == .invalidDimensions(.jpeg))
    }

    @Test func aJPEGWithOnlyHeadersAndEOIIsMalformed() {
        let data = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xD9])
        guard case .malformed(.jpeg, _)? = validationError(data) else {
            Issue.record("expected malformed, got \(String(describing: validationError(data)))")
            return
        }
    }

    @Test func everyErrorExplainsItselfNamingTheFormat() {
        let errors: [ImageValidationError] = [
            .truncated(.gif), .checksumMismatch(.png, chunk: "IDAT"), .missingEndMarker(.jpeg),
            .malformed(.webp, reason: "the VP8 data is not a key frame"), .invalidDimensions(.png),
        ]
        for error in errors {
            #expect(["PNG", "JPEG", "GIF", "WebP"].contains { error.description.contains($0) })
        }
        #expect(ImageValidationError.checksumMismatch(.png, chunk: "IDAT").description.contains("IDAT"))
        #expect(!ImageValidationError.empty.description.isEmpty)
        #expect(!ImageValidationError.unknownFormat.description.isEmpty)
    }
}
