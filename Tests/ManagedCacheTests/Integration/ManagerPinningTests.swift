import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import ManagedCache

/// Pinning through the manager, against the loopback server and a real `FileCache`: a load whose
/// policy pins (per manager, per request, prefetches included) commits its bytes pinned; an object
/// the app stores with `pinned: true` is written pinned; `pin` / `unpin` by request afterwards; and
/// every failure (over the quota, no file cache, a cache that cannot pin) is typed and reported,
/// with the object still delivered.
@Suite(.offCooperativePool) struct ManagerPinningTests {
    /// A `FileCache` keeping one unpinned entry: whatever is not pinned is soon evicted.
    private func tinyCache(_ directory: TemporaryDirectory, pinnedByteLimit: Int? = 1 << 20) throws -> FileCache {
        try FileCache(directory: directory.url, configuration: .init(countLimit: 1, pinnedByteLimit: pinnedByteLimit))
    }

    private func pinnedKeys(_ cache: any FileCaching) -> Set<String> {
        Set(cache.pinnedEntries().map(\.key))
    }

    @Test func aLoadWhoseRequestPinsCommitsItsBytesPinned() async throws {
        let server = try LoopbackServer()
        for path in ["/keep", "/a", "/b"] { server.setRoute(path, .ok(fixtureBody(path, count: 2_000))) }
        let directory = TemporaryDirectory(prefix: "pin-load")
        let cache = try tinyCache(directory)
        let manager = makeNetworkManager(fileCache: cache)
        var keep = ObjectRequest(url: server.url("/keep"))
        keep.policy.pinsInFileCache = true
        #expect(try await manager.object(for: keep, decoder: DataDecoder()) == fixtureBody("/keep", count: 2_000))
        for path in ["/a", "/b"] { _ = try await manager.object(for: ObjectRequest(url: server.url(path)), decoder: DataDecoder()) }
        #expect(pinnedKeys(cache) == [keep.dataKey])
        #expect(cache.entry(forKey: keep.dataKey) != nil, "the count limit of 1 evicted the others, not the pinned entry")
        #expect(cache.entry(forKey: ObjectRequest(url: server.url("/a")).dataKey) == nil)
        #expect(cache.statistics.pinnedBytes == 2_000)
    }

    @Test func aManagerWhosePolicyPinsPinsEveryLoadAndARequestCanOptOut() async throws {
        let server = try LoopbackServer()
        for path in ["/a", "/b", "/c"] { server.setRoute(path, .ok(fixtureBody(path, count: 100))) }
        let directory = TemporaryDirectory(prefix: "pin-manager")
        let cache = try tinyCache(directory)
        let manager = makeNetworkManager(fileCache: cache) { $0.policy.pinsInFileCache = true }
        for path in ["/a", "/b"] { _ = try await manager.object(for: ObjectRequest(url: server.url(path)), decoder: DataDecoder()) }
        var optOut = ObjectRequest(url: server.url("/c"))
        optOut.policy.pinsInFileCache = false
        _ = try await manager.object(for: optOut, decoder: DataDecoder())
        #expect(pinnedKeys(cache) == [ObjectRequest(url: server.url("/a")).dataKey, ObjectRequest(url: server.url("/b")).dataKey])
    }

    @Test func aPrefetchPinsThroughItsRequestsPolicyOverrides() async throws {
        let server = try LoopbackServer()
        for index in 0..<4 { server.setRoute("/p\(index)", .ok(fixtureBody("p\(index)", count: 500))) }
        let directory = TemporaryDirectory(prefix: "pin-prefetch")
        let cache = try tinyCache(directory)
        let manager = makeNetworkManager(fileCache: cache)
        let requests = (0..<4).map { index in
            ObjectRequest(url: server.url("/p\(index)"), policy: PolicyOverrides(pinsInFileCache: true))
        }
        manager.prefetch(requests)
        let expected = Set(requests.map(\.dataKey))
        #expect(await waitUntil { pinnedKeys(cache) == expected })
        #expect(try cache.pinnedEntries().allSatisfy { try cache.readData(for: $0).count == 500 })
    }

    @Test func aResumedDownloadIsCommittedPinned() async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("resumed", count: 2_000_000)
        server.setRoute(
            "/large",
            LoopbackResponse.ok(body).caching(etag: "\"r1\"").behaving(.truncate(afterBodyBytes: 1_200_000, sendContentLength: true)))
        let directory = TemporaryDirectory(prefix: "pin-resume")
        let cache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: cache)
        let request = ObjectRequest(url: server.url("/large"), policy: PolicyOverrides(pinsInFileCache: true))
        await #expect(throws: ManagedCacheError.self) { _ = try await manager.object(for: request, decoder: DataDecoder()) }
        let kept = try #require(cache.partialDownload(forKey: request.dataKey)).byteCount
        #expect(cache.pinnedEntries().isEmpty, "nothing is pinned before its commit")
        server.setRoute("/large", LoopbackResponse.ok(body).caching(etag: "\"r1\""))
        #expect(try await manager.object(for: request, decoder: DataDecoder()) == body)
        #expect(server.recordedRequests(for: "/large").last?.header("Range") == "bytes=\(kept)-")
        #expect(cache.pinnedEntries().map(\.key) == [request.dataKey])
        #expect(cache.statistics.pinnedBytes == body.count)
    }

    @Test func aLoadOverThePinnedQuotaIsDeliveredAndTheFailureReported() async throws {
        let server = try LoopbackServer()
        server.setRoute("/big", .ok(fixtureBody("big", count: 5_000)))
        let directory = TemporaryDirectory(prefix: "pin-quota")
        let cache = try tinyCache(directory, pinnedByteLimit: 1_000)
        let events = EventLog()
        let manager = makeNetworkManager(fileCache: cache) { $0.eventHandler = events.handler }
        var request = ObjectRequest(url: server.url("/big"))
        request.policy.pinsInFileCache = true
        #expect(try await manager.object(for: request, decoder: DataDecoder()) == fixtureBody("big", count: 5_000))
        let failures = events.all.compactMap { event -> FileCacheError? in
            if case .fileCacheFailure(request.dataKey, .commit, let error) = event { return error }
            return nil
        }
        #expect(failures == [.pinnedQuotaExceeded(key: request.dataKey, byteCount: 5_000, pinnedBytes: 0, quota: 1_000)])
        #expect(cache.pinnedEntries().isEmpty)
    }

    @Test func anObjectTheAppStoresPinnedIsWrittenPinned() async throws {
        let directory = TemporaryDirectory(prefix: "pin-store")
        let cache = try tinyCache(directory, pinnedByteLimit: 1_000)
        let manager = makeNetworkManager(fileCache: cache)
        let avatar = ObjectRequest(oid: "me/avatar")
        try await manager.store(Data(repeating: 7, count: 600), for: avatar, decoder: DataDecoder(), toFileCache: true, pinned: true)
        try await manager.store(Data(repeating: 1, count: 10), for: ObjectRequest(oid: "other"), decoder: DataDecoder(), toFileCache: true)
        try await manager.store(Data(repeating: 2, count: 10), for: ObjectRequest(oid: "third"), decoder: DataDecoder(), toFileCache: true)
        #expect(pinnedKeys(cache) == [avatar.dataKey])
        #expect(try cache.readData(for: try #require(cache.entry(forKey: avatar.dataKey))) == Data(repeating: 7, count: 600))
        // Over the quota: typed, and the pinned bytes stay as they were.
        await #expect(
            throws: StoreError.fileCacheFailed(.pinnedQuotaExceeded(key: "banner", byteCount: 500, pinnedBytes: 600, quota: 1_000))
        ) {
            try await manager.store(
                Data(repeating: 3, count: 500), for: ObjectRequest(oid: "banner"), decoder: DataDecoder(), toFileCache: true, pinned: true)
        }
        // A pin asked for bytes that are not written is refused before anything is stored.
        await #expect(throws: StoreError.invalidRequest(reason: "pinned without toFileCache")) {
            try await manager.store(Data([1]), for: ObjectRequest(oid: "nowhere"), decoder: DataDecoder(), pinned: true)
        }
        #expect(manager.cachedObject(for: ObjectRequest(oid: "nowhere"), decoder: DataDecoder()) == nil)
    }

    @Test func pinningAndUnpinningByRequestAfterTheLoad() async throws {
        let server = try LoopbackServer()
        for path in ["/a", "/b", "/c"] { server.setRoute(path, .ok(fixtureBody(path, count: 300))) }
        let directory = TemporaryDirectory(prefix: "pin-by-key")
        let cache = try tinyCache(directory)
        let manager = makeNetworkManager(fileCache: cache)
        let request = ObjectRequest(url: server.url("/a"))
        #expect(throws: FileCacheError.noEntry(key: request.dataKey)) { try manager.pin(request) }
        _ = try await manager.object(for: request, decoder: DataDecoder())
        let entry = try manager.pin(request)
        #expect(entry.byteCount == 300 && pinnedKeys(cache) == [request.dataKey])
        _ = try await manager.object(for: ObjectRequest(url: server.url("/b")), decoder: DataDecoder())
        #expect(cache.entry(forKey: request.dataKey) != nil)
        try manager.unpin(request)
        #expect(cache.pinnedEntries().isEmpty)
        _ = try await manager.object(for: ObjectRequest(url: server.url("/c")), decoder: DataDecoder())
        #expect(cache.entry(forKey: request.dataKey) == nil, "unpinned, it was evicted by the count limit")
    }

    /// A load that finds its bytes cached writes nothing for its writer to pin: the manager pins
    /// them by key when the request's policy asks (what a prefetch that reports does per request).
    @Test func bytesAlreadyCachedArePinnedByKeyWhenThePolicyAsks() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a", .ok(fixtureBody("a", count: 400)))
        let directory = TemporaryDirectory(prefix: "pin-cached")
        let cache = try tinyCache(directory, pinnedByteLimit: 100)
        let manager = makeNetworkManager(fileCache: cache)
        let plain = ObjectRequest(url: server.url("/a"))
        _ = try await manager.object(for: plain, decoder: DataDecoder())
        #expect(manager.fileCacheReader.pinIfPolicyAsks(plain) == nil && cache.pinnedEntries().isEmpty, "not asked: nothing pinned")
        let pinning = ObjectRequest(url: server.url("/a"), policy: PolicyOverrides(pinsInFileCache: true))
        #expect(
            manager.fileCacheReader.pinIfPolicyAsks(pinning)
                == .pinnedQuotaExceeded(key: plain.dataKey, byteCount: 400, pinnedBytes: 0, quota: 100))
        let roomyDirectory = TemporaryDirectory(prefix: "pin-cached-roomy")
        let roomy = try tinyCache(roomyDirectory)
        let second = makeNetworkManager(fileCache: roomy)
        _ = try await second.object(for: plain, decoder: DataDecoder())
        #expect(second.fileCacheReader.pinIfPolicyAsks(pinning) == nil)
        #expect(pinnedKeys(roomy) == [plain.dataKey])
        #expect(
            second.fileCacheReader.pinIfPolicyAsks(ObjectRequest(url: server.url("/never"), policy: PolicyOverrides(pinsInFileCache: true)))
                == nil)
    }

    @Test func withoutAFileCacheThatCanPinEveryPinIsRefusedTypedAndLoadsStillDeliver() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a", .ok(fixtureBody("a", count: 100)))
        let request = ObjectRequest(url: server.url("/a"), policy: PolicyOverrides(pinsInFileCache: true))
        // No file cache.
        let bare = makeNetworkManager()
        #expect(throws: FileCacheError.pinningUnsupported) { try bare.pin(request) }
        #expect(throws: FileCacheError.pinningUnsupported) { try bare.unpin(request) }
        // A custom file cache that keeps the protocol's defaults.
        let directory = TemporaryDirectory(prefix: "pin-custom-manager")
        let custom = SimpleFileCache(directory: directory.url)
        let events = EventLog()
        let manager = makeNetworkManager(fileCache: custom) { $0.eventHandler = events.handler }
        #expect(try await manager.object(for: request, decoder: DataDecoder()) == fixtureBody("a", count: 100))
        let failures = events.all.compactMap { event -> FileCacheError? in
            if case .fileCacheFailure(request.dataKey, .create, let error) = event { return error }
            return nil
        }
        #expect(failures == [.pinningUnsupported])
        #expect(custom.entry(forKey: request.dataKey) == nil, "nothing written unpinned behind the caller's back")
        #expect(throws: FileCacheError.pinningUnsupported) { try manager.pin(request) }
        await #expect(throws: StoreError.fileCacheFailed(.pinningUnsupported)) {
            try await manager.store(Data([1]), for: ObjectRequest(oid: "x"), decoder: DataDecoder(), toFileCache: true, pinned: true)
        }
    }
}
