import Foundation
import ManagedCache
import ManagedCacheUIKit
import TestSupport
import Testing

@Suite struct ImageDecoderTests {
    @Test(arguments: RealImageFixture.all)
    func aRealFileDecodesToItsFormatSizeAndFrames(_ fixture: RealImageFixture) throws {
        let data = try fixture.data()
        let image = try ImageDecoder().decodeImage(data)
        #expect(image.format == fixture.expected.format)
        #expect(image.pixelSize == fixture.expected.orientedPixelSize)  // upright (EXIF 5–8 swap)
        #expect(image.frameCount == fixture.expected.frameCount)
        #expect(image.encodedData == data)
        #expect(image.transformations.isEmpty)
    }

    @Test func theMemoryCostIsTheDecodedBitmapNotTheEncodedSize() throws {
        let data = try RealImageFixture.named("baseline.jpg")  // 64×48, a few hundred bytes
        let decoder = ImageDecoder()
        let image = try decoder.decodeImage(data)
        #expect(decoder.cost(of: image, byteCount: data.count) == 64 * 48 * 4)
        #expect(image.decodedByteCount == 64 * 48 * 4)
    }

    @Test func truncatedOrCorruptBytesAreRejectedWithTheValidatorsReason() throws {
        let data = try RealImageFixture.named("rgba.png")
        #expect(throws: ImageDecodingError.invalidImage(.truncated(.png))) {
            try ImageDecoder().decodeImage(data.dropLast(1))
        }
        #expect(throws: ImageDecodingError.invalidImage(.unknownFormat)) {
            try ImageDecoder().decodeImage(Data("<html>404</html>".utf8))
        }
    }

    @Test func anImageDeclaringTooManyPixelsIsRejectedBeforeDecoding() throws {
        // A valid PNG whose header claims 30000×30000 pixels: a decompression bomb.
        var png = PNGChunkList(pngBytes(width: 4, height: 4))
        let huge = PNGChunkList.bigEndian(30_000)
        png.chunks[0].data.replaceSubrange(0..<4, with: huge)
        png.chunks[0].data.replaceSubrange(4..<8, with: huge)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 30_000, height: 30_000, limit: ImageDecoder.defaultMaximumPixelCount)) {
            try ImageDecoder().decodeImage(png.data)
        }
        #expect(throws: ImageDecodingError.tooManyPixels(width: 8, height: 6, limit: 47)) {
            try ImageDecoder(maximumPixelCount: 47).decodeImage(pngBytes(width: 8, height: 6))
        }
        #expect(try ImageDecoder(maximumPixelCount: nil).decodeImage(png.data).pixelWidth == 30_000)
    }

    @Test func aCutShortDownloadFailsAsDecodingFailedAndIsNeverCached() async throws {
        let loader = ScriptedDataLoader()
        let bytes = pngBytes(seed: 3)
        loader.script("cut", .body(bytes.prefix(bytes.count - 5)))
        let manager = makeImageManager(loader: loader)
        let url = ScriptedDataLoader.url("cut")
        let user = RecordingUser(ObjectRequest(url: url), decoder: ImageDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        guard case .decodingFailed(let reason) = user.errors.first else {
            Issue.record("expected decodingFailed, got \(user.errors)")
            return
        }
        #expect(reason == ImageDecodingError.invalidImage(.truncated(.png)).description)
        #expect(manager.cachedImage(for: url) == nil)
        // The bytes were purged: the next attempt downloads again.
        loader.script("cut", .body(bytes))
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(loader.requestCount("cut") == 2)
    }
}
