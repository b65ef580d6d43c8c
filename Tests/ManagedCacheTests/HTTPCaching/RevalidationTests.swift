import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// A route whose body and ETag a test can change, like a server publishing a new version.
final class VersionedResource: Sendable {
    private let version = Lock(1)
    let cacheControl: String

    init(cacheControl: String = "max-age=0") { self.cacheControl = cacheControl }

    func publish(_ next: Int) { version.withLock { $0 = next } }

    func install(on server: LoopbackServer, at path: String) {
        server.setHandler(path) { [self] _ in
            let current = version.withLock { $0 }
            return LoopbackResponse.ok(Data("version \(current)".utf8))
                .caching(etag: "\"v\(current)\"", cacheControl: cacheControl)
        }
    }
}

@Suite(.offCooperativePool) struct RevalidationTests {
    @Test func staleObjectIsRevalidatedWith304WithoutBodyOrDecode() async throws {
        let server = try LoopbackServer()
        VersionedResource().install(on: server, at: "/doc")
        let manager = makeNetworkManager()
        let decoder = BlobDecoder()
        let first = RecordingUser(ObjectRequest(url: server.url("/doc")), decoder: decoder)
        manager.manage(first)
        #expect(await waitUntil { first.objects.count == 1 })
        let bytesAfterFirst = server.bodyBytesSent

        let second = RecordingUser(ObjectRequest(url: server.url("/doc")), decoder: decoder)
        manager.manage(second)
        #expect(await waitUntil { second.objects.count == 1 })
        #expect(second.origins == [.revalidated])
        #expect(second.objects[0] === first.objects[0])
        #expect(decoder.decodes.count == 1)
        #expect(server.requestCount(for: "/doc") == 2)
        #expect(server.recordedRequests(for: "/doc").last?.header("If-None-Match") == "\"v1\"")
        #expect(server.bodyBytesSent == bytesAfterFirst)
        #expect(manager.statistics.notModified == 1)
        #expect(manager.statistics.revalidations == 1)
    }

    /// A `304` that repeats no `Cache-Control` leaves a `max-age=0` object stale: the next use
    /// revalidates again, from memory and from the file cache alike.
    @Test func a304WithoutCacheControlLeavesAMaxAgeZeroObjectStale() async throws {
        let server = try LoopbackServer()
        server.setHandler("/bare304") { request in
            if request.header("If-None-Match") == "\"v1\"" { return LoopbackResponse(status: 304, etag: "\"v1\"") }
            return LoopbackResponse.ok(Data("version 1".utf8)).caching(etag: "\"v1\"", cacheControl: "max-age=0")
        }
        let directory = TemporaryDirectory()
        let manager = makeNetworkManager(fileCache: SimpleFileCache(directory: directory.url))
        let url = server.url("/bare304")
        for _ in 0..<3 {
            let object = try await manager.object(for: ObjectRequest(url: url), decoder: BlobDecoder())
            #expect(object.text == "version 1")
        }
        #expect(server.requestCount(for: "/bare304") == 3)
        manager.removeAllObjects()
        _ = try await manager.object(for: ObjectRequest(url: url), decoder: BlobDecoder())
        #expect(server.requestCount(for: "/bare304") == 4)
        #expect(manager.statistics.notModified == 3)
    }

    @Test func changedResourceReplacesTheObjectAndTheFile() async throws {
        let server = try LoopbackServer()
        let resource = VersionedResource()
        resource.install(on: server, at: "/doc")
        let directory = TemporaryDirectory()
        let fileCache = SimpleFileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let first = try await manager.object(for: ObjectRequest(url: server.url("/doc")), decoder: BlobDecoder())
        #expect(first.text == "version 1")
        resource.publish(2)
        let second = try await manager.object(for: ObjectRequest(url: server.url("/doc")), decoder: BlobDecoder())
        #expect(second.text == "version 2")
        let entry = try #require(fileCache.entry(forKey: server.url("/doc").absoluteString))
        #expect(try fileCache.readData(for: entry) == Data("version 2".utf8))
        #expect(entry.metadata.etag == "\"v2\"")
    }

    @Test func freshObjectIsServedWithoutARequestWhileMaxAgeHolds() async throws {
        let server = try LoopbackServer()
        VersionedResource(cacheControl: "max-age=3600").install(on: server, at: "/fresh")
        let directory = TemporaryDirectory()
        let manager = makeNetworkManager(fileCache: SimpleFileCache(directory: directory.url))
        _ = try await manager.object(for: ObjectRequest(url: server.url("/fresh")), decoder: BlobDecoder())
        _ = try await manager.object(for: ObjectRequest(url: server.url("/fresh")), decoder: BlobDecoder())
        manager.removeAllObjects()
        let fromDisk = try await manager.object(for: ObjectRequest(url: server.url("/fresh")), decoder: BlobDecoder())
        #expect(fromDisk.text == "version 1")
        #expect(server.requestCount(for: "/fresh") == 1)
    }

    @Test func noStoreResponsesAreNeverWrittenToDisk() async throws {
        let server = try LoopbackServer()
        server.setRoute("/secret", .ok(Data("secret".utf8)).caching(cacheControl: "no-store"))
        let directory = TemporaryDirectory()
        let fileCache = SimpleFileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let blob = try await manager.object(for: ObjectRequest(url: server.url("/secret")), decoder: BlobDecoder())
        #expect(blob.text == "secret")
        #expect(fileCache.statistics.count == 0)
    }

    @Test func policyOverridesTheServerPerRequest() async throws {
        let server = try LoopbackServer()
        VersionedResource(cacheControl: "max-age=0").install(on: server, at: "/doc")
        let manager = makeNetworkManager()
        let plain = ObjectRequest(url: server.url("/doc"))
        _ = try await manager.object(for: plain, decoder: BlobDecoder())
        #expect(server.requestCount(for: "/doc") == 1)
        // "Never revalidate" uses the stale object as it is.
        let never = ObjectRequest(url: server.url("/doc"), policy: PolicyOverrides(freshness: .neverRevalidate))
        _ = try await manager.object(for: never, decoder: BlobDecoder())
        #expect(server.requestCount(for: "/doc") == 1)
        // The server's max-age=0 makes the next plain request revalidate.
        _ = try await manager.object(for: plain, decoder: BlobDecoder())
        #expect(server.requestCount(for: "/doc") == 2)
        // Freshness is decided when a response arrives: "cache for a day" overrides max-age=0 then,
        // and the object stays fresh for later requests.
        let forADay = ObjectRequest(url: server.url("/doc"), policy: PolicyOverrides(freshness: .fixed(seconds: 86_400)))
        _ = try await manager.object(for: forADay, decoder: BlobDecoder())
        #expect(server.requestCount(for: "/doc") == 3)
        _ = try await manager.object(for: plain, decoder: BlobDecoder())
        _ = try await manager.object(for: forADay, decoder: BlobDecoder())
        #expect(server.requestCount(for: "/doc") == 3)
    }

    @Test func staleWhileRevalidateDeliversAtOnceThenTheNewObjectToLiveUsers() async throws {
        let server = try LoopbackServer()
        let resource = VersionedResource()
        resource.install(on: server, at: "/feed")
        let manager = makeNetworkManager { $0.policy.staleWhileRevalidate = true }
        let showing = RecordingUser(ObjectRequest(url: server.url("/feed")), decoder: BlobDecoder())
        manager.manage(showing)
        #expect(await waitUntil { showing.objects.count == 1 })
        resource.publish(2)

        let newcomer = RecordingUser(ObjectRequest(url: server.url("/feed")), decoder: BlobDecoder())
        manager.manage(newcomer)
        #expect(newcomer.objects.map(\.text) == ["version 1"])  // synchronously, stale
        #expect(await waitUntil { newcomer.objects.count == 2 && showing.objects.count == 2 })
        #expect(newcomer.objects.last?.text == "version 2")
        #expect(showing.objects.last?.text == "version 2")
        #expect(newcomer.objects.last === showing.objects.last)
    }

    @Test func staleFileEntryIsRevalidatedWithoutDownloadingTheBody() async throws {
        let server = try LoopbackServer()
        VersionedResource().install(on: server, at: "/disk")
        let directory = TemporaryDirectory()
        let fileCache = SimpleFileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        _ = try await manager.object(for: ObjectRequest(url: server.url("/disk")), decoder: BlobDecoder())
        manager.removeAllObjects()
        let bytesBefore = server.bodyBytesSent
        let user = RecordingUser(ObjectRequest(url: server.url("/disk")), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects[0].text == "version 1")
        #expect(user.origins == [.revalidated])
        #expect(server.bodyBytesSent == bytesBefore)
        #expect(server.recordedRequests(for: "/disk").last?.header("If-None-Match") == "\"v1\"")
    }

    /// The paths that read a file-cache hit inside `manage` (an awaited load of a small entry,
    /// and the `.synchronous` delivery policy) revalidate a stale entry like the background lookup.
    @Test(arguments: ["awaited", "synchronous policy"])
    func aStaleFileEntryReadInsideManageIsRevalidatedNotServedAsIs(path: String) async throws {
        let server = try LoopbackServer()
        let resource = VersionedResource()
        resource.install(on: server, at: "/inline")
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache) { configuration in
            if path == "synchronous policy" { configuration.policy.fileCacheDelivery = .synchronous }
        }
        let request = ObjectRequest(url: server.url("/inline"))
        _ = try await manager.object(for: request, decoder: BlobDecoder())
        manager.removeAllObjects()
        resource.publish(2)
        let text: String
        if path == "awaited" {
            text = try await manager.object(for: request, decoder: BlobDecoder()).text
        } else {
            let user = RecordingUser(request, decoder: BlobDecoder())
            manager.manage(user)
            #expect(await waitUntil { user.objects.count == 1 })
            text = user.objects.first?.text ?? ""
        }
        #expect(text == "version 2")
        #expect(server.requestCount(for: "/inline") == 2)
        #expect(server.recordedRequests(for: "/inline").last?.header("If-None-Match") == "\"v1\"")
    }

    @Test func staleObjectIsUsedWhenTheServerIsUnreachable() async throws {
        let server = try LoopbackServer()
        VersionedResource().install(on: server, at: "/offline")
        let directory = TemporaryDirectory()
        let manager = makeNetworkManager(fileCache: SimpleFileCache(directory: directory.url))
        _ = try await manager.object(for: ObjectRequest(url: server.url("/offline")), decoder: BlobDecoder())
        let url = server.url("/offline")
        try server.refuseConnections()
        manager.removeAllObjects()
        let offline = try await manager.object(for: ObjectRequest(url: url), decoder: BlobDecoder())
        #expect(offline.text == "version 1")
    }

    @Test func keyHeadersKeepVariantsOfOneURLApart() async throws {
        let server = try LoopbackServer()
        server.setHandler("/img") { request in
            .ok(Data((request.header("Accept") ?? "none").utf8))
        }
        let manager = makeNetworkManager()
        let webp = ObjectRequest(url: server.url("/img"), headers: ["Accept": "image/webp"], keyHeaders: ["Accept"])
        let png = ObjectRequest(url: server.url("/img"), headers: ["Accept": "image/png"], keyHeaders: ["Accept"])
        let first = try await manager.object(for: webp, decoder: BlobDecoder())
        let second = try await manager.object(for: png, decoder: BlobDecoder())
        #expect(first.text == "image/webp")
        #expect(second.text == "image/png")
        #expect(server.requestCount(for: "/img") == 2)
        #expect(webp.dataKey != png.dataKey)
    }

    @Test func cacheDirectivesParseServerHeaders() {
        let received = Date(timeIntervalSince1970: 1_000_000)
        let policy = FreshnessPolicy.fromServer(defaultMaxAge: nil)
        let maxAge = HTTPCacheDirectives(headers: ["cache-control": "public, max-age=60", "age": "10"])
        #expect(maxAge.freshUntil(receivedAt: received, policy: policy) == received.addingTimeInterval(50))
        let noCache = HTTPCacheDirectives(headers: ["cache-control": "no-cache"])
        #expect(noCache.freshUntil(receivedAt: received, policy: policy) == received)
        let immutable = HTTPCacheDirectives(headers: ["cache-control": "max-age=1, immutable"])
        #expect(immutable.freshUntil(receivedAt: received, policy: policy) == nil)
        let expires = HTTPCacheDirectives(headers: [
            "expires": "Sun, 06 Nov 1994 09:49:37 GMT", "date": "Sun, 06 Nov 1994 08:49:37 GMT",
        ])
        #expect(expires.freshUntil(receivedAt: received, policy: policy) == received.addingTimeInterval(3600))
        #expect(HTTPCacheDirectives(headers: ["cache-control": "no-store, must-revalidate"]).noStore)
        let none = HTTPCacheDirectives(headers: [:])
        #expect(none.freshUntil(receivedAt: received, policy: .fromServer(defaultMaxAge: 30)) == received.addingTimeInterval(30))
        #expect(none.freshUntil(receivedAt: received, policy: .fixed(seconds: 5)) == received.addingTimeInterval(5))
    }
}
