import Foundation
import LoopbackServer
import ManagedCache
import TestSupport
import Testing

@Suite struct NetworkLoadingTests {
    @Test func downloadsOnceCountsBytesAndReportsProgress() async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("a", count: 100_000)
        server.setRoute("/a", .ok(body))
        let manager = makeNetworkManager()
        let user = RecordingUser(ObjectRequest(url: server.url("/a")), decoder: DataDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects[0] == body)
        #expect(user.origins == [.network])
        #expect(user.progress.last?.receivedBytes == body.count)
        #expect(user.progress.last?.expectedBytes == body.count)
        #expect(server.requestCount(for: "/a") == 1)
        let statistics = manager.statistics
        #expect(statistics.bytesDownloaded == body.count)
        #expect(statistics.networkRequests == 1)
        #expect(statistics.networkLoads == 1)
    }

    /// The counters a load bumps from its own thread (requests sent, bytes) are kept apart from the
    /// rest (so a load never takes the manager's lock to count); `statistics` adds them up and `resetStatistics` clears them too.
    @Test func resettingTheStatisticsClearsEveryCounter() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a", .ok(fixtureBody("a", count: 10_000)))
        let manager = makeNetworkManager()
        let user = RecordingUser(ObjectRequest(url: server.url("/a")), decoder: DataDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        let before = manager.statistics
        #expect(before.networkRequests == 1 && before.bytesDownloaded == 10_000 && before.requests == 1)
        manager.resetStatistics()
        #expect(manager.statistics == ManagerStatistics())
    }

    @Test func thousandConcurrentUsersMakeOneHTTPRequest() async throws {
        let server = try LoopbackServer()
        server.setRoute("/shared", .ok(Data("shared".utf8)).behaving(.delayed(seconds: 0.05)))
        let manager = makeNetworkManager()
        let decoder = BlobDecoder()
        let users = (0..<1_000).map { _ in RecordingUser(ObjectRequest(url: server.url("/shared")), decoder: decoder) }
        await withTaskGroup(of: Void.self) { group in
            for user in users { group.addTask { manager.manage(user) } }
        }
        #expect(await waitUntil { users.allSatisfy { $0.objects.count == 1 } })
        #expect(server.requestCount(for: "/shared") == 1)
        #expect(decoder.decodes.count == 1)
        #expect(users.allSatisfy { $0.objects[0] === users[0].objects[0] })
    }

    @Test(arguments: [404, 410, 500, 503])
    func nonSuccessStatusFailsTypedAndCachesNothing(status: Int) async throws {
        let server = try LoopbackServer()
        // A body that looks like an image must not be cached as one.
        server.setRoute("/x.png", .status(status, body: fixtureBody("png", count: 2_000)))
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let user = RecordingUser(ObjectRequest(url: server.url("/x.png")), decoder: DataDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        #expect(user.errors == [.httpStatus(code: status)])
        #expect(manager.memoryCache.count == 0)
        #expect(fileCache.statistics.count == 0)
        #expect(manager.statistics.failures[.httpStatus] == 1)
    }

    @Test func bodyShorterThanItsContentLengthFailsAndCachesNothing() async throws {
        let server = try LoopbackServer()
        server.setRoute("/cut", .ok(fixtureBody("cut", count: 50_000)).behaving(.truncate(afterBodyBytes: 20_000, sendContentLength: true)))
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let user = RecordingUser(ObjectRequest(url: server.url("/cut")), decoder: DataDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        guard case .transport = user.errors.first else {
            Issue.record("expected a transport error, got \(user.errors)")
            return
        }
        #expect(manager.memoryCache.count == 0)
        #expect(fileCache.statistics.count == 0)
    }

    @Test func connectionResetMidBodyFailsAndTheNextGoodRequestSucceeds() async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("reset", count: 60_000)
        server.setRoute("/r", .ok(body).behaving(.reset(afterBodyBytes: 10_000)))
        let manager = makeNetworkManager()
        let user = RecordingUser(ObjectRequest(url: server.url("/r")), decoder: DataDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        #expect(user.errors.first?.isTransient == true)
        server.setRoute("/r", .ok(body))
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects[0] == body)
    }

    @Test func stalledResponseTimesOutWithTheManagersOwnTimer() async throws {
        let server = try LoopbackServer()
        server.setRoute("/stall", .ok(fixtureBody("s", count: 10_000)).behaving(.stall(afterBodyBytes: 100)))
        let manager = makeNetworkManager { $0.policy.timeout = 0.3 }
        let user = RecordingUser(ObjectRequest(url: server.url("/stall")), decoder: DataDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        #expect(user.errors == [.timedOut(seconds: 0.3)])
        #expect(manager.memoryCache.count == 0)
        // The timed-out transfer was stopped: the client closed its connection.
        #expect(await waitUntil { server.openConnectionCount == 0 })
    }

    @Test func redirectsAreFollowedAndLoopsFail() async throws {
        let server = try LoopbackServer()
        server.setRoute("/old", .redirect(to: "/new", status: 301))
        server.setRoute("/new", .ok(Data("moved".utf8)))
        server.setRoute("/loop", .redirect(to: "/loop"))
        let manager = makeNetworkManager()
        let moved = RecordingUser(ObjectRequest(url: server.url("/old")), decoder: BlobDecoder())
        manager.manage(moved)
        #expect(await waitUntil { moved.objects.count == 1 })
        #expect(moved.objects[0].text == "moved")
        let looping = RecordingUser(ObjectRequest(url: server.url("/loop")), decoder: BlobDecoder())
        manager.manage(looping)
        #expect(await waitUntil { looping.errors.count == 1 })
        guard case .transport = looping.errors.first else {
            Issue.record("expected a transport error for a redirect loop, got \(looping.errors)")
            return
        }
    }

    @Test func bodyOverTheSizeLimitIsStoppedAndNotCached() async throws {
        let server = try LoopbackServer()
        server.setRoute("/big", .ok(fixtureBody("big", count: 200_000)))
        server.setRoute(
            "/big-unannounced",
            .ok(fixtureBody("big", count: 200_000))
                .behaving(.truncate(afterBodyBytes: 200_000, sendContentLength: false)))
        let manager = makeNetworkManager { $0.policy.maximumBodySize = 50_000 }
        for path in ["/big", "/big-unannounced"] {
            let user = RecordingUser(ObjectRequest(url: server.url(path)), decoder: DataDecoder())
            manager.manage(user)
            #expect(await waitUntil { user.errors.count == 1 })
            #expect(user.errors == [.tooLarge(limit: 50_000)])
        }
        #expect(manager.memoryCache.count == 0)
    }

    @Test func callerHeadersReachTheServer() async throws {
        let server = try LoopbackServer()
        server.setRoute("/h", .ok(Data("h".utf8)))
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/h"), headers: ["Authorization": "Bearer token-1"])
        _ = try await manager.object(for: request, decoder: DataDecoder())
        #expect(server.recordedRequests(for: "/h").first?.header("authorization") == "Bearer token-1")
    }

    @Test func loadPushedOutOfTheBufferIsCancelledOnTheWire() async throws {
        let server = try LoopbackServer()
        server.setRoute("/stalled", .ok(fixtureBody("x", count: 10_000)).behaving(.stall(afterBodyBytes: 1_000)))
        server.setRoute("/next", .ok(Data("next".utf8)))
        let manager = makeNetworkManager { $0.loadingBufferSize = 1 }
        let first = RecordingUser(ObjectRequest(url: server.url("/stalled")), decoder: DataDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.progress.contains { $0.receivedBytes >= 1_000 } })
        #expect(server.openConnectionCount == 1)
        let second = RecordingUser(ObjectRequest(url: server.url("/next")), decoder: DataDecoder())
        manager.manage(second)
        #expect(first.errors == [.cancelled(.loadingBufferOverflow)])
        #expect(await waitUntil { second.objects.count == 1 })
        // The stalled transfer was really stopped: its connection is closed by the client, so at
        // most the keep-alive connection of "/next" stays open (2 if the stalled one had survived).
        #expect(await waitUntil { server.openConnectionCount <= 1 })
        #expect(manager.activeLoadCount == 0)
        #expect(first.objects.isEmpty)
    }
}
