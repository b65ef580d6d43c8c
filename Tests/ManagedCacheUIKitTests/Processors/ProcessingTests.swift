import Foundation
import ImageFixtures
import LoopbackServer
import ManagedCache
import ManagedCacheLocking
import ManagedCacheUIKit
import TestSupport
import Testing

/// Where processors ran: on the main queue or not, one entry per run.
private final class Places: Sendable {
    private let state = Lock<[Bool]>([])
    func record() { state.withLock { $0.append(MainQueueMarker.isOnMainQueue) } }
    var all: [Bool] { state.withLock { $0 } }
}

/// A processor that counts its runs, records where it ran, and tags the image.
private func countingProcessor(_ name: String, runs: Counter, places: Places? = nil) -> ClosureImageProcessor {
    ClosureImageProcessor(identifier: name) { image in
        runs.increment()
        places?.record()
        return image.addingTransformation(name)
    }
}

/// What a pixel backend does on Apple platforms, with real PNG bytes on Linux: "resizing" and
/// `PNGSizeProcessor` make a PNG of the new size, encoding returns those bytes, so a processed
/// variant can be stored in the file cache and read back.
private struct PNGPixelBackend: ImageDecoding {
    var canTransformPixels: Bool { true }

    func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage {
        DecodedImage(info: info, encodedData: data)
    }

    func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage? {
        PNGSizeProcessor.image(of: plan.canvasSize, from: image, adding: nil)
    }

    func encode(_ image: DecodedImage, compressionQuality: Double) -> Data? { image.encodedData }
}

/// Shrinks an image to half its size, as a real PNG (see `PNGPixelBackend`), counting its runs.
private struct PNGSizeProcessor: ImageProcessor {
    let runs: Counter
    var identifier: String { "half" }

    func process(_ image: DecodedImage) throws -> DecodedImage {
        runs.increment()
        let size = PixelSize(width: max(1, image.pixelWidth / 2), height: max(1, image.pixelHeight / 2))
        return Self.image(of: size, from: image, adding: identifier)
    }

    static func image(of size: PixelSize, from image: DecodedImage, adding name: String?) -> DecodedImage {
        let bytes = ImageFixtureEncoder.patternPNG(width: size.width, height: size.height, seed: 3)
        let info = ImageInfo(format: .png, pixelWidth: size.width, pixelHeight: size.height)
        return DecodedImage(info: info, encodedData: bytes, transformations: image.transformations + (name.map { [$0] } ?? []))
    }
}

private struct Refusing: ImageProcessor {
    struct Refusal: Error {}
    var identifier: String { "refusing" }
    func process(_ image: DecodedImage) throws -> DecodedImage { throw Refusal() }
}

/// Processors run in order, once per key and variant, off the main thread, their
/// variants keyed and cached apart and sharing one download; on Linux without pixels.
@Suite struct ProcessingTests {
    @Test func onLinuxTheBuiltInsWorkOutTheResultsSizeAndRecordWhatTheyDid() throws {
        let image = try decodedPNG(width: 40, height: 30)
        let resized = try ResizeImageProcessor(size: PixelSize(width: 20, height: 20)).process(image)
        #expect(resized.pixelSize == PixelSize(width: 20, height: 20))
        #expect(resized.transformations == ["resize(20x20,aspectFill)"])
        #expect(resized.encodedData == nil, "the original bytes are not these pixels")
        #expect(resized.format == .png)
        #expect(try CropImageProcessor(size: PixelSize(width: 10, height: 5)).process(image).pixelSize == PixelSize(width: 10, height: 5))
        #expect(try CircleImageProcessor().process(image).pixelSize == PixelSize(width: 30, height: 30))
        let rounded = try RoundedCornersImageProcessor(radius: 4).process(image)
        #expect(rounded.pixelSize == image.pixelSize && rounded.transformations == ["roundedCorners(4)"])
        let blurred = try BlurImageProcessor(radius: 3).process(image)
        #expect(blurred.pixelSize == image.pixelSize && blurred.transformations == ["blur(3.0)"])
    }

    @Test func processorsWithNothingToDoReturnTheImageItself() throws {
        let image = try decodedPNG(width: 40, height: 30)
        #expect(try ResizeImageProcessor(size: PixelSize(width: 80, height: 60)).process(image) == image, "no upscaling")
        #expect(try CropImageProcessor(size: PixelSize(width: 40, height: 30)).process(image) == image)
        #expect(try RoundedCornersImageProcessor(radius: 0).process(image) == image)
        #expect(try BlurImageProcessor(radius: 0.2).process(image) == image)
    }

    @Test func theFormatFitsFirstThenItsProcessorsThenTheDecodersInOrder() throws {
        let backend = FakePixelBackend()
        let format = ImageCacheFormat(
            name: "thumb", size: PixelSize(width: 8, height: 8),
            processors: [ClosureImageProcessor(identifier: "first") { $0.addingTransformation("first \($0.pixelSize)") }])
        let decoder = ImageDecoder(
            format: format,
            processors: [CircleImageProcessor(), ClosureImageProcessor(identifier: "last") { $0.addingTransformation("last") }],
            backend: backend)
        #expect(decoder.identifier == "image/thumb>first>circle>last")
        #expect(format.variantIdentifier == "image/thumb>first")
        let image = try decoder.decodeImage(pngBytes(width: 32, height: 16))
        #expect(image.transformations == ["resized to 8×8 (aspectFill)", "first 8×8", "circle", "last"])
        #expect(backend.calls.first == .decode(maximumPixelDimension: 16))
        #expect(ImageDecoder(processors: [BlurImageProcessor(radius: 1)]).identifier == "image>blur(1.0)")
    }

    @Test func aFirstResizingProcessorLetsTheDecoderDownsample() throws {
        let backend = FakePixelBackend()
        let decoder = ImageDecoder(processors: [ResizeImageProcessor(size: PixelSize(width: 10, height: 10))], backend: backend)
        let image = try decoder.decodeImage(pngBytes(width: 40, height: 20))
        #expect(backend.calls == [.decode(maximumPixelDimension: 20)])
        #expect(image.pixelSize == PixelSize(width: 10, height: 10))
        _ = try ImageDecoder(processors: [CircleImageProcessor()], backend: backend).decodeImage(pngBytes(width: 40, height: 20))
        #expect(backend.calls.last == .decode(maximumPixelDimension: nil), "a processor that needs every pixel")
    }

    @Test func aFailingProcessorFailsTheDecodeWithItsName() async throws {
        #expect(throws: ImageDecodingError.processingFailed(processor: "refusing", reason: "Refusal()")) {
            try ImageDecoder(processors: [Refusing()]).decodeImage(pngBytes())
        }
        let server = try LoopbackServer()
        server.setRoute("/a.png", .ok(pngBytes(), contentType: "image/png"))
        let manager = makeNetworkManager()
        await #expect(throws: ManagedCacheError.self) {
            try await manager.object(for: ObjectRequest(url: server.url("/a.png")), decoder: ImageDecoder(processors: [Refusing()]))
        }
    }

    @Test func eachVariantIsProcessedOnceOffTheMainQueueCachedUnderItsKeyAndSharesTheDownload() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/photo.png", response: .ok(pngBytes(width: 40, height: 30), contentType: "image/png"))
        let manager = makeNetworkManager { $0.memoryCacheCostLimit = 64 << 20 }
        let request = ObjectRequest(url: server.url("/photo.png"))
        let (circleRuns, blurRuns) = (Counter(), Counter())
        let places = Places()
        let circle = ImageDecoder(processors: [CircleImageProcessor(), countingProcessor("c", runs: circleRuns, places: places)])
        let blur = ImageDecoder(processors: [BlurImageProcessor(radius: 2), countingProcessor("b", runs: blurRuns, places: places)])
        let users =
            (0..<3).map { _ in RecordingUser(request, decoder: circle) } + (0..<3).map { _ in RecordingUser(request, decoder: blur) }
        for user in users { manager.manage(user) }
        #expect(await waitUntil { gate.arrivals == 1 })
        gate.open()
        #expect(await waitUntil { users.allSatisfy { $0.objects.count == 1 } })

        #expect(server.requestCount(for: "/photo.png") == 1, "one download for every variant")
        #expect(circleRuns.count == 1 && blurRuns.count == 1, "once per key and variant, not per user")
        #expect(places.all == [false, false], "never on the main queue")
        #expect(users[0].objects[0].transformations == ["circle", "c"])
        #expect(users[3].objects[0].transformations == ["blur(2.0)", "b"])
        #expect(users[1].objects[0] == users[0].objects[0] && users[4].objects[0] == users[3].objects[0])
        let keys = Set(manager.memoryCache.keysFromMostRecent.map(\.variant))
        #expect(keys == [circle.identifier, blur.identifier])
        #expect(manager.cachedObject(for: request, decoder: circle)?.pixelSize == PixelSize(width: 30, height: 30))
        #expect(manager.cachedObject(for: request, decoder: ImageDecoder()) == nil, "the original was never asked for")

        // A later user of a variant is a memory hit: nothing runs again.
        let later = RecordingUser(request, decoder: circle)
        manager.manage(later)
        #expect(later.origins == [DataOrigin.memory])
        #expect(circleRuns.count == 1)
    }

    @Test func aProcessedVariantIsStoredInTheFileCacheWhereTheFormatSaysAndReadBackUnprocessed() async throws {
        let server = try LoopbackServer()
        server.setRoute("/big.png", .ok(pngBytes(width: 40, height: 20), contentType: "image/png"))
        let directory = TemporaryDirectory()
        let request = ObjectRequest(url: server.url("/big.png"))
        let runs = Counter()
        func decoder(storing: Bool) -> ImageDecoder {
            ImageDecoder(
                format: ImageCacheFormat(name: storing ? "kept" : "memory", storesVariantInFileCache: storing),
                processors: [PNGSizeProcessor(runs: runs)], backend: PNGPixelBackend())
        }
        let fileCache = try FileCache(directory: directory.url)
        let first = makeNetworkManager(fileCache: fileCache)
        for storing in [true, false] {
            let image = try await first.object(for: request, decoder: decoder(storing: storing))
            #expect(image.pixelSize == PixelSize(width: 20, height: 10))
        }
        #expect(runs.count == 2)
        // The kept variant is written after its users are answered: wait for it, or the next
        // manager may find only the original and process it again.
        #expect(await waitUntil { fileCache.entriesByRecency(limit: 10).contains { $0.key != request.dataKey } })
        #expect(decoder(storing: true).storesVariant && !decoder(storing: false).storesVariant)

        // A new manager on the same directory: the kept variant is read as it is (not processed
        // again, not downloaded); the memory-only one is made again from the cached original.
        let second = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        let kept = try await second.object(for: request, decoder: decoder(storing: true))
        #expect(kept.pixelSize == PixelSize(width: 20, height: 10))
        #expect(runs.count == 2)
        let remade = try await second.object(for: request, decoder: decoder(storing: false))
        #expect(remade.pixelSize == PixelSize(width: 20, height: 10))
        #expect(runs.count == 3)
        #expect(server.requestCount(for: "/big.png") == 1, "every variant shares the one download")
    }
}
