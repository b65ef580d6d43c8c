import Foundation
import LoopbackServer
import ManagedCacheLocking
import ManagedCacheUIKit
import TestSupport
import Testing

@testable import ManagedCache

/// Storing images: `storeImage`, and what images encode to.
@Suite struct StoreImageTests {
    private func tagging(_ name: String, runs: Counter) -> ClosureImageProcessor {
        ClosureImageProcessor(identifier: name) { image in
            runs.increment()
            return image.addingTransformation(name)
        }
    }

    @Test func aStoredImageIsWhatLaterLoadsOfItsOidGetAtOnce() async throws {
        let server = try LoopbackServer()
        server.setRoute("/avatar.png", .ok(pngBytes(seed: 1), contentType: "image/png"))
        let manager = makeNetworkManager()
        let edited = try decodedPNG(seed: 2)
        try await manager.storeImage(edited, for: ObjectRequest(oid: "avatar-42"))

        #expect(manager.cachedImage(for: server.url("/avatar.png"), oid: "avatar-42") == edited)
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)
        view.load(url: server.url("/avatar.png"), oid: "avatar-42")
        #expect(recorder.displays == [ImageViewDisplay(content: .image(edited))], "a memory hit: shown inside load, no transition")
        #expect(recorder.callbacks == [.imageSet(edited, .memory)])
        #expect(server.requestCount(for: "/avatar.png") == 0)
    }

    @Test func withAFormatTheVariantIsMadeInTheBackgroundOnceAndStoredBesideTheOriginal() async throws {
        let manager = makeNetworkManager()
        let runs = Counter()
        let format = ImageCacheFormat(name: "tagged", processors: [tagging("tag", runs: runs)])
        let image = try decodedPNG(seed: 3)
        let request = ObjectRequest(oid: "photo")
        let variant = try await manager.storeImage(image, for: request, format: format)
        #expect(variant == image.addingTransformation("tag"))
        #expect(runs.count == 1)
        #expect(manager.cachedObject(for: request, decoder: ImageDecoder()) == image)
        #expect(manager.cachedObject(for: request, decoder: ImageDecoder(format: format)) == variant)
        let user = RecordingUser(request, decoder: ImageDecoder(format: format))
        manager.manage(user)
        #expect(user.objects == [variant] && user.origins == [.memory])
        #expect(runs.count == 1)
    }

    @Test func usersWaitingForAVariantGetItMadeFromTheStoredImageInsteadOfTheDownload() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/photo.png", response: .ok(pngBytes(seed: 5), contentType: "image/png"))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let runs = Counter()
        let format = ImageCacheFormat(name: "tagged", processors: [tagging("tag", runs: runs)])
        let request = ObjectRequest(url: server.url("/photo.png"), oid: "photo-5")
        let user = RecordingUser(request, decoder: ImageDecoder(format: format))
        manager.manage(user)
        #expect(await waitUntil { gate.arrivals == 1 })

        let mine = try decodedPNG(seed: 6)
        manager.storeImage(mine, for: request, format: format, completion: nil)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects == [mine.addingTransformation("tag")])
        #expect(user.origins == [.stored])
        #expect(runs.count == 1, "the download's bytes are never processed")
        #expect(manager.activeLoadCount == 0)
    }

    @Test func onLinuxAnImageGoesToTheFileCacheAsTheBytesItCameFromAndItsVariantsAreMadeFromThem() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a.png", .ok(pngBytes(seed: 8), contentType: "image/png"))
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let request = ObjectRequest(url: server.url("/a.png"))
        let mine = try decodedPNG(seed: 9)
        try await manager.storeImage(mine, for: request, toFileCache: true)
        let entry = try #require(fileCache.entry(forKey: request.dataKey))
        #expect(try fileCache.readData(for: entry) == pngBytes(seed: 9))

        let later = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        #expect(try await later.object(for: request, decoder: ImageDecoder()) == mine)
        #expect(server.requestCount(for: "/a.png") == 0)

        // A processed variant has no bytes of its own on Linux: the original is written, and a later
        // load makes the variant from it again, without a download.
        let circle = ImageCacheFormat(name: "circle", processors: [CircleImageProcessor()])
        let round = ObjectRequest(url: server.url("/round.png"), oid: "round")
        let made = try await manager.storeImage(mine, for: round, format: circle, toFileCache: true)
        #expect(made.pixelSize == PixelSize(width: 6, height: 6))
        #expect(manager.cachedObject(for: round, decoder: ImageDecoder(format: circle)) == made)
        #expect(try fileCache.readData(for: try #require(fileCache.entry(forKey: round.dataKey))) == pngBytes(seed: 9))
        let third = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        #expect(try await third.image(for: server.url("/round.png"), oid: "round", format: circle) == made)
        #expect(server.totalRequestCount == 0)
        await #expect(throws: StoreError.encodingUnsupported) {
            try await manager.store(made, for: round, decoder: ImageDecoder(format: circle), toFileCache: true)
        }
    }

    @Test func whatImagesEncodeTo() throws {
        let image = try decodedPNG(seed: 4)
        #expect(try ImageDecoder().encode(image) == pngBytes(seed: 4), "Linux keeps the bytes it decoded")
        let processed = try CircleImageProcessor().process(image)
        #expect(try ImageDecoder(processors: [CircleImageProcessor()]).encode(processed) == nil)
        let backend = FakePixelBackend()
        let variant = ImageDecoder(format: ImageCacheFormat(name: "v", compressionQuality: 0.3), backend: backend)
        #expect(try variant.encode(processed) == Data("encoded 6×6".utf8), "a stored variant is its encoded variant")
        #expect(backend.calls.last == .encode(quality: 0.3))
        #expect(try ImageDecoder(backend: backend).encode(processed) == Data("encoded 6×6".utf8))
        #expect(backend.calls.last == .encode(quality: ImageDecoder.storedImageCompressionQuality))
    }
}
