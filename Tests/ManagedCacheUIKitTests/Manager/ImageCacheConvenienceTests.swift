import Foundation
import ManagedCache
import ManagedCacheUIKit
import ManagedCacheLocking
import Testing
import TestSupport

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
        #expect(try first.all[0].get() == expected)

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

    @Test func aFailureReachesTheCompletionWithItsTypedError() async {
        let loader = ScriptedDataLoader()
        loader.script("missing", .failure(.httpStatus(code: 404)))
        let manager = makeImageManager(loader: loader)
        let results = Results()
        #expect(manager.image(for: ScriptedDataLoader.url("missing"), completion: results.append) == nil)
        #expect(await waitUntil { results.all.count == 1 })
        #expect(throws: ManagedCacheError.httpStatus(code: 404)) { try results.all[0].get() }
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

    @Test func theDefaultImageManagerIsSharedUntilReplaced() {
        #expect(ObjectManager.defaultImageManager === ObjectManager.shared)
        let configuration = ObjectManager.Configuration.images(memoryCacheCostLimit: 1 << 20)
        #expect(configuration.memoryCacheCostLimit == 1 << 20)
        #expect(configuration.loadingBufferSize == 12)
    }
}
