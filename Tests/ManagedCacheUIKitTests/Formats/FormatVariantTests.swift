import Foundation
import ManagedCache
import ManagedCacheUIKit
import TestSupport
import Testing

@Suite struct FormatVariantTests {
    /// A format whose post-transform counts its runs and records itself in the image.
    private func countingFormat(_ name: String, runs: Counter, size: PixelSize? = nil) -> ImageCacheFormat {
        ImageCacheFormat(name: name, size: size) { image in
            runs.increment()
            return image.addingTransformation("\(name) post")
        }
    }

    @Test func twoFormatsOfOneURLShareOneDownloadAndCacheTwoVariants() async throws {
        let loader = ScriptedDataLoader()
        try scriptPNG(loader, "photo", seed: 7, held: true)
        let manager = makeImageManager(loader: loader)
        let url = ScriptedDataLoader.url("photo")
        let thumbRuns = Counter()
        let largeRuns = Counter()
        let thumb = countingFormat("thumb", runs: thumbRuns, size: PixelSize(width: 4, height: 4))
        let large = countingFormat("large", runs: largeRuns)

        let users = [thumb, large, thumb].map { format in
            RecordingUser(ObjectRequest(url: url), decoder: ImageDecoder(format: format))
        }
        for user in users { manager.manage(user) }
        #expect(await waitUntil { loader.activeCount("photo") == 1 })
        loader.release("photo")
        #expect(await waitUntil { users.allSatisfy { $0.objects.count == 1 } })

        #expect(loader.requestCount("photo") == 1)
        #expect(manager.statistics.networkLoads == 1)
        #expect(manager.statistics.decodes == 2)
        #expect(thumbRuns.count == 1 && largeRuns.count == 1)
        let images = users.map { $0.objects.first }
        #expect(images[0]?.transformations == ["thumb post"])
        #expect(images[1]?.transformations == ["large post"])
        #expect(images[2] == images[0], "users of one format share one image")

        let keys = Set(manager.memoryCache.keysFromMostRecent)
        #expect(
            keys == [
                ObjectKey(dataKey: url.absoluteString, variant: "image/thumb"),
                ObjectKey(dataKey: url.absoluteString, variant: "image/large"),
            ])
        #expect(manager.cachedImage(for: url, format: thumb) == images[0])
        #expect(manager.cachedImage(for: url, format: large) == images[1])
        #expect(manager.cachedImage(for: url) == nil, "the original is not decoded when nobody asks for it")
    }

    @Test func eachFormatIsItsOwnVariantIdentifier() {
        #expect(ImageDecoder().identifier == "image")
        #expect(ImageDecoder(format: ImageCacheFormat(name: "avatar")).identifier == "image/avatar")
    }

    @Test func onLinuxFormatsAreKeptInMemoryOnlyButAPixelBackendStoresVariants() throws {
        let format = ImageCacheFormat(
            name: "thumb", size: PixelSize(width: 2, height: 2), compressionQuality: 0.4,
            keepsOriginal: false)
        let structural = ImageDecoder(format: format, backend: StructuralImageDecoding())
        #expect(!structural.storesVariant)
        #expect(structural.encodedVariant(of: try decodedPNG()) == nil)
        #expect(!structural.keepsOriginal)

        let backend = FakePixelBackend()
        let pixels = ImageDecoder(format: format, backend: backend)
        #expect(pixels.storesVariant)
        let variant = pixels.encodedVariant(of: try pixels.decodeImage(pngBytes()))
        #expect(variant == Data("encoded 2×2".utf8))
        #expect(backend.calls.last == .encode(quality: 0.4))
        #expect(!ImageDecoder(backend: backend).storesVariant, "no format, no variant")
        #expect(ImageDecoder().keepsOriginal)
    }

    @Test func theFormatPipelineDownsamplesRunsPreResizesThenRunsPost() throws {
        let backend = FakePixelBackend()
        let format = ImageCacheFormat(
            name: "square", size: PixelSize(width: 4, height: 4), scaleMode: .aspectFill,
            preTransform: { $0.addingTransformation("pre \($0.pixelSize)") },
            postTransform: { $0.addingTransformation("post \($0.pixelSize)") })
        let image = try ImageDecoder(format: format, backend: backend).decodeImage(pngBytes(width: 16, height: 8))

        #expect(image.pixelSize == PixelSize(width: 4, height: 4))
        #expect(image.transformations == ["pre 16×8", "resized to 4×4 (aspectFill)", "post 4×4"])
        let plan = ImageResizePlan(
            source: PixelSize(width: 16, height: 8), target: PixelSize(width: 4, height: 4),
            scaleMode: .aspectFill)
        #expect(backend.calls == [.decode(maximumPixelDimension: 8), .resize(plan)])
    }

    @Test func aStoredVariantIsDecodedAsItIsWithoutTransformingAgain() throws {
        let runs = Counter()
        let format = countingFormat("thumb", runs: runs)
        let image = try ImageDecoder(format: format).decodeImage(pngBytes(), isStoredVariant: true)
        #expect(image.transformations.isEmpty)
        #expect(runs.count == 0)
    }
}
