import Foundation
import ManagedCache
import ManagedCacheLocking
import ManagedCacheUIKit
import TestSupport
import Testing

/// JMImageCache's "return the image now if cached, else call back", on `ObjectManager`.
@Suite struct ImageCacheConvenienceTests {
    /// Collects the results a completion handler receives.
    private final class Results: Sendable {
        private let values = Lock<[Result<DecodedImage, ManagedCacheError>]>([])
        func append(_ result: Result<DecodedImage, ManagedCacheError>) { values.withLock { $0.append(result) } }
        var all: [Result<DecodedImage, ManagedCacheError>] { values.withLock { $0 } }
    }

    @Test func aMissReturnsNilAndCallsBackThenAHitReturnsAtOnceWithoutCallingBack() async throws {
        let loader = ScriptedDataLoader()
        let expected = try scriptPNG(loader, "a", seed: 1)
        let manager = makeImageManager(loader: loader)
        let url = ScriptedDataLoader.url("a")

        let first = Results()
        #expect(manager.image(for: url, completion: first.append) == nil)
        #expect(await waitUntil { first.all.count == 1 })
        #expect(try #require(first.all.first).get() == expected)

        let second = Results()
        #expect(manager.image(for: url, completion: second.append) == expected)
        #expect(manager.cachedImage(for: url) == expected)
        // A later miss elsewhere proves the hit's completion had every chance to run, and did not.
        try scriptPNG(loader, "b", seed: 2)
        let marker = Results()
        _ = manager.image(for: ScriptedDataLoader.url("b"), completion: marker.append)
        #expect(await waitUntil { marker.all.count == 1 })
        #expect(second.all.isEmpty)
        #expect(loader.requestCount("a") == 1)
    }

    /// The UIKit form's completion is `@MainActor` in its type (it may touch views)
    /// and runs there (on the main queue); a hit returns at once without calling it.
    @MainActor @Test func theMainActorFormCallsBackOnTheMainThread() async throws {
        let loader = ScriptedDataLoader()
        let expected = try scriptPNG(loader, "m", seed: 3)
        let manager = makeImageManager(loader: loader)
        let url = ScriptedDataLoader.url("m")
        let results = Results()
        let onMainThread = Lock<[Bool]>([])

        #expect(
            manager.image(
                for: url,
                onMainActor: { result in
                    onMainThread.withLock { $0.append(MainQueueMarker.isOnMainQueue) }
                    results.append(result)
                }) == nil)
        #expect(await waitUntil { results.all.count == 1 })
        #expect(try #require(results.all.first).get() == expected)
        #expect(onMainThread.withLock { $0 } == [true])
        #expect(manager.image(for: url, onMainActor: { results.append($0) }) == expected)
        #expect(results.all.count == 1)
    }

    @Test func aFailureReachesTheCompletionWithItsTypedError() async throws {
        let loader = ScriptedDataLoader()
        loader.script("missing", .failure(.httpStatus(code: 404)))
        let manager = makeImageManager(loader: loader)
        let results = Results()
        #expect(manager.image(for: ScriptedDataLoader.url("missing"), completion: results.append) == nil)
        #expect(await waitUntil { results.all.count == 1 })
        let result = try #require(results.all.first)
        #expect(throws: ManagedCacheError.httpStatus(code: 404)) { try result.get() }
    }

    @Test func theAsyncFormAndRemovalWorkPerFormat() async throws {
        let loader = ScriptedDataLoader()
        let expected = try scriptPNG(loader, "a", seed: 5)
        let manager = makeImageManager(loader: loader)
        let url = ScriptedDataLoader.url("a")
        let thumb = ImageCacheFormat(name: "thumb")

        #expect(try await manager.image(for: url) == expected)
        #expect(try await manager.image(for: url, format: thumb) == expected)
        manager.removeImage(for: url, format: thumb)
        #expect(manager.cachedImage(for: url, format: thumb) == nil)
        #expect(manager.cachedImage(for: url) == expected)
    }

    @Test func imageConfigurationsAreTunedForImages() {
        let configuration = ObjectManager.Configuration.images(memoryCacheCostLimit: 1 << 20)
        #expect(configuration.memoryCacheCostLimit == 1 << 20)
        #expect(configuration.memoryCacheCountLimit == 500)
        #expect(configuration.loadingBufferSize == 12)
        #expect(configuration.fileCache == nil)
    }

    /// With no manager given, image views get an image-tuned manager that keeps its
    /// downloads in a file cache, in the user's caches directory.
    @Test func theDefaultImageConfigurationKeepsDownloadsInAFileCache() throws {
        let directory = TemporaryDirectory()
        let configuration = ObjectManager.Configuration.defaultImages(directory: directory.url.appendingPathComponent("images"))
        #expect(configuration.memoryCacheCountLimit == 500)
        let cache = try #require(configuration.fileCache as? BigFileCache)
        #expect(cache.configuration.byteLimit == 256 << 20)
        #expect(cache.configuration.maximumAge == TimeInterval(7 * 24 * 3_600))
        #expect(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("images").path))
        let caches = try #require(FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first)
        #expect(ObjectManager.Configuration.defaultImageCacheDirectory.path.hasPrefix(caches.path))
    }

    @Test func aDefaultImageConfigurationWorksWithoutItsDirectory() throws {
        let directory = TemporaryDirectory()
        let blocker = directory.url.appendingPathComponent("file")
        try Data("not a directory".utf8).write(to: blocker)
        let configuration = ObjectManager.Configuration.defaultImages(directory: blocker.appendingPathComponent("images"))
        #expect(configuration.fileCache == nil)
        #expect(configuration.memoryCacheCountLimit == 500)
    }
}
