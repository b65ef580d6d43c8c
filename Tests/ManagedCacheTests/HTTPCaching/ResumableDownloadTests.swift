import Foundation
import LoopbackServer
import ManagedCache
import TestSupport
import Testing

/// The file caches that keep partial downloads: the test fixture and the two shipped ones.
enum ResumableCacheKind: String, CaseIterable, Sendable {
    case simple, file, big

    func make(_ directory: URL) throws -> any FileCaching {
        switch self {
        case .simple: return SimpleFileCache(directory: directory)
        case .file: return try FileCache(directory: directory)
        case .big: return try BigFileCache(directory: directory)
        }
    }
}

@Suite(.offCooperativePool) struct ResumableDownloadTests {
    static let size = 5_000_000
    static let cut = 3_000_000  // 60 %

    /// Loads once through a server that cuts the body at 60 %, and checks that the failure kept a partial download.
    private func interruptedLoad(server: LoopbackServer, manager: ObjectManager, fileCache: any FileCaching, body: Data, etag: String)
        async throws
    {
        server.setRoute(
            "/big",
            LoopbackResponse.ok(body).caching(etag: etag)
                .behaving(.truncate(afterBodyBytes: Self.cut, sendContentLength: true)))
        await #expect(throws: ManagedCacheError.self) {
            _ = try await manager.object(for: ObjectRequest(url: server.url("/big")), decoder: DataDecoder())
        }
        let partial = fileCache.partialDownload(forKey: server.url("/big").absoluteString)
        #expect(partial?.byteCount ?? 0 > 0)
        #expect(partial?.validator == etag)
    }

    @Test(arguments: ResumableCacheKind.allCases)
    func interruptedDownloadResumesWithARangeForTheRest(kind: ResumableCacheKind) async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("five-megabytes", count: Self.size)
        let directory = TemporaryDirectory()
        let fileCache = try kind.make(directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        try await interruptedLoad(server: server, manager: manager, fileCache: fileCache, body: body, etag: "\"big-1\"")
        let kept = try #require(fileCache.partialDownload(forKey: server.url("/big").absoluteString)).byteCount

        server.setRoute("/big", LoopbackResponse.ok(body).caching(etag: "\"big-1\""))
        server.resetStatistics()
        let data = try await manager.object(for: ObjectRequest(url: server.url("/big")), decoder: DataDecoder())
        #expect(data == body)
        let resumed = try #require(server.recordedRequests(for: "/big").last)
        #expect(resumed.header("Range") == "bytes=\(kept)-")
        #expect(resumed.header("If-Range") == "\"big-1\"")
        #expect(server.bodyBytesSent == Self.size - kept)
        #expect(fileCache.partialDownload(forKey: server.url("/big").absoluteString) == nil)
    }

    @Test(arguments: ResumableCacheKind.allCases)
    func changedETagForcesACleanRestart(kind: ResumableCacheKind) async throws {
        let server = try LoopbackServer()
        let oldBody = fixtureBody("old", count: Self.size)
        let newBody = fixtureBody("new", count: Self.size)
        let directory = TemporaryDirectory()
        let fileCache = try kind.make(directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        try await interruptedLoad(server: server, manager: manager, fileCache: fileCache, body: oldBody, etag: "\"old\"")

        server.setRoute("/big", LoopbackResponse.ok(newBody).caching(etag: "\"new\""))
        server.resetStatistics()
        let data = try await manager.object(for: ObjectRequest(url: server.url("/big")), decoder: DataDecoder())
        #expect(data == newBody)
        #expect(server.bodyBytesSent == Self.size)
    }

    @Test(arguments: ResumableCacheKind.allCases)
    func serverWithoutRangeSupportGetsACleanRestart(kind: ResumableCacheKind) async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("norange", count: Self.size)
        let directory = TemporaryDirectory()
        let fileCache = try kind.make(directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        try await interruptedLoad(server: server, manager: manager, fileCache: fileCache, body: body, etag: "\"n\"")

        var plain = LoopbackResponse.ok(body).caching(etag: "\"n\"")
        plain.supportsRanges = false
        server.setRoute("/big", plain)
        let data = try await manager.object(for: ObjectRequest(url: server.url("/big")), decoder: DataDecoder())
        #expect(data == body)
    }

    @Test(arguments: ResumableCacheKind.allCases)
    func partialDataIsNeverVisibleAsAnObject(kind: ResumableCacheKind) async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("partial", count: Self.size)
        let directory = TemporaryDirectory()
        let fileCache = try kind.make(directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        try await interruptedLoad(server: server, manager: manager, fileCache: fileCache, body: body, etag: "\"p\"")
        #expect(fileCache.entry(forKey: server.url("/big").absoluteString) == nil)
        #expect(fileCache.statistics.count == 0)
        #expect(manager.memoryCache.count == 0)
    }

    @Test(arguments: ResumableCacheKind.allCases)
    func resumingCanBeTurnedOffByPolicy(kind: ResumableCacheKind) async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("off", count: 1_000_000)
        server.setRoute(
            "/big",
            LoopbackResponse.ok(body).caching(etag: "\"o\"")
                .behaving(.truncate(afterBodyBytes: 600_000, sendContentLength: true)))
        let directory = TemporaryDirectory()
        let fileCache = try kind.make(directory.url)
        let manager = makeNetworkManager(fileCache: fileCache) { $0.policy.resumesDownloads = false }
        _ = try? await manager.object(for: ObjectRequest(url: server.url("/big")), decoder: DataDecoder())
        #expect(fileCache.partialDownload(forKey: server.url("/big").absoluteString) == nil)
    }

    @Test func partialDownloadSurvivesReopeningTheCacheAndRemoveAllClearsIt() async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("relaunch", count: Self.size)
        let directory = TemporaryDirectory()
        let key = server.url("/big").absoluteString
        do {
            let fileCache = try FileCache(directory: directory.url)
            try await interruptedLoad(
                server: server, manager: makeNetworkManager(fileCache: fileCache),
                fileCache: fileCache, body: body, etag: "\"r\"")
        }
        // The app is launched again: a new cache instance and manager on the same directory.
        let reopened = try FileCache(directory: directory.url)
        let kept = try #require(reopened.partialDownload(forKey: key)).byteCount
        server.setRoute("/big", LoopbackResponse.ok(body).caching(etag: "\"r\""))
        server.resetStatistics()
        let data = try await makeNetworkManager(fileCache: reopened)
            .object(for: ObjectRequest(url: server.url("/big")), decoder: DataDecoder())
        #expect(data == body)
        #expect(server.bodyBytesSent == Self.size - kept)

        reopened.removeEntry(forKey: key)  // so the next load goes to the network and is cut again
        try await interruptedLoad(
            server: server, manager: makeNetworkManager(fileCache: reopened),
            fileCache: reopened, body: fixtureBody("other", count: Self.size), etag: "\"s\"")
        reopened.removeAll()
        #expect(reopened.partialDownload(forKey: key) == nil)
    }
}
