import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import ManagedCache

/// `Configuration.loadRateLimit` in a manager: loads beyond the burst wait for a token; those
/// cancelled while they wait never reach the loader; cache hits never wait. The rates are so low
/// (one token in 1,000 s) that no second token can come during a test: what goes is decided by
/// the burst alone, never by how fast the machine is.
@Suite struct LoadRateLimitTests {
    /// A limit whose only tokens are the burst's.
    static func burstOnly(_ burst: Int) -> LoadRateLimit { LoadRateLimit(loadsPerSecond: 0.001, burst: burst) }

    @Test func theDefaultIsEightyPerSecondAfterABurstOfTwentyFiveAndNilTurnsItOff() {
        #expect(ObjectManager.Configuration().loadRateLimit == LoadRateLimit(loadsPerSecond: 80, burst: 25))
        #expect(LoadRateLimit.default == LoadRateLimit(loadsPerSecond: 80, burst: 25))
        let loader = ScriptedDataLoader()
        #expect(makeScriptedManager(loader: loader).loadRateLimiter?.burst == 25)
        #expect(makeScriptedManager(loader: loader) { $0.loadRateLimit = nil }.loadRateLimiter == nil)
    }

    /// A fast scroll: ten cells, a buffer of four. Only the burst's three loads ever reach the
    /// loader: the loads pushed out before their turn never do (and spend no token), their users
    /// hear why, and at least one of the four cells left waits for a token.
    @Test func aFastScrollSendsOnlyTheBurstAndLoadsPushedOutBeforeTheirTurnNeverReachTheLoader() async {
        let loader = ScriptedDataLoader()
        let paths = (1...10).map { "cell\($0)" }
        for path in paths { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data("!".utf8))) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 4) { $0.loadRateLimit = Self.burstOnly(3) }
        let users = paths.map { RecordingUser(request($0), decoder: BlobDecoder()) }
        for user in users { manager.manage(user) }
        for user in users.prefix(6) { #expect(user.errors == [.cancelled(.loadingBufferOverflow)]) }
        for user in users.suffix(4) { #expect(user.errors.isEmpty && user.objects.isEmpty) }

        // Settled: the four loads left either run in the loader or wait for a token. Which ones got
        // the tokens depends on when each task ran (a pushed-out load cancelled before it asked
        // spends none); how many reached the loader does not.
        let live = Array(paths.suffix(4))
        func requests(_ paths: [String]) -> Int { paths.reduce(0) { $0 + loader.requestCount($1) } }
        #expect(
            await waitUntil {
                manager.runningFetchTaskCount == 4
                    && (manager.loadRateLimiter?.waitingCount ?? 0) + live.filter { loader.activeCount($0) == 1 }.count == 4
            })
        #expect(requests(paths) <= 3, "only the burst's loads reached the loader")
        #expect((manager.loadRateLimiter?.waitingCount ?? 0) >= 1)

        // Cancelled while they wait: they end without a request.
        let sent = requests(paths)
        manager.cancelAll()
        for user in users.suffix(4) { #expect(user.errors.count == 1) }
        #expect(await waitUntil { manager.loadRateLimiter?.waitingCount == 0 && manager.runningFetchTaskCount == 0 })
        #expect(requests(paths) == sent)
    }

    /// Over HTTP: two of five loads (the burst) reach the server and load; the other three wait,
    /// neither loaded nor failed, until they are cancelled, and the server never sees them.
    @Test func overTheNetworkOnlyTheBurstIsSentAndTheRestWait() async throws {
        let server = try LoopbackServer()
        let paths = (1...5).map { "/item/\($0)" }
        for path in paths { server.setRoute(path, .ok(fixtureBody(path, count: 2_000))) }
        let manager = makeNetworkManager { $0.loadRateLimit = Self.burstOnly(2) }
        let users = paths.map { RecordingUser(ObjectRequest(url: server.url($0)), decoder: DataDecoder()) }
        for user in users { manager.manage(user) }
        #expect(await waitUntil { users.filter { $0.objects.count == 1 }.count == 2 })
        #expect(await waitUntil { manager.loadRateLimiter?.waitingCount == 3 })
        #expect(server.totalRequestCount == 2)
        #expect(users.allSatisfy { $0.errors.isEmpty })

        manager.cancelAll()
        #expect(await waitUntil { manager.runningFetchTaskCount == 0 })
        #expect(users.filter { $0.errors == [.cancelled(.managerShutDown)] }.count == 3)
        #expect(server.totalRequestCount == 2)
    }

    /// The limit sits in front of the loader only: file-cache hits (delivered in the background,
    /// like a load) never wait, and the burst's one token is still there for the network.
    @Test func fileCacheHitsNeverWaitForAToken() async throws {
        let server = try LoopbackServer()
        server.setRoute("/fresh", .ok(Data("from the network".utf8)))
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let cached = (1...5).map { ObjectRequest(url: server.url("/cached/\($0)")) }
        for request in cached {
            _ = try fileCache.store(Data(request.url.path.utf8), forKey: request.dataKey, metadata: FileCacheMetadata())
        }
        let manager = makeNetworkManager(fileCache: fileCache) {
            $0.loadRateLimit = Self.burstOnly(1)
            $0.policy.fileCacheDelivery = .asynchronous
        }
        let users = cached.map { RecordingUser($0, decoder: DataDecoder()) }
        for user in users { manager.manage(user) }
        #expect(await waitUntil { users.allSatisfy { $0.objects.count == 1 } })
        #expect(users.allSatisfy { $0.origins == [.fileCache] })
        #expect(server.totalRequestCount == 0)

        let fresh = RecordingUser(ObjectRequest(url: server.url("/fresh")), decoder: DataDecoder())
        manager.manage(fresh)
        #expect(await waitUntil { fresh.objects.count == 1 })
        #expect(fresh.origins == [.network])
        #expect(server.totalRequestCount == 1)
    }

    /// Only loads the loading buffer can push out are paced: an `async` caller's loads and
    /// prefetches go at once, with the burst spent.
    @Test func asyncLoadsAndPrefetchesAreNotPaced() async throws {
        let server = try LoopbackServer()
        let paths = (1...3).map { "/async/\($0)" } + ["/prefetched", "/cell"]
        for path in paths { server.setRoute(path, .ok(fixtureBody(path, count: 1_000))) }
        let manager = makeNetworkManager { $0.loadRateLimit = Self.burstOnly(1) }
        let cell = RecordingUser(ObjectRequest(url: server.url("/cell")), decoder: DataDecoder())
        manager.manage(cell)  // spends the one token
        #expect(await waitUntil { cell.objects.count == 1 })
        for path in paths.prefix(3) {
            let data = try await manager.object(for: ObjectRequest(url: server.url(path)), decoder: DataDecoder())
            #expect(data == fixtureBody(path, count: 1_000))
        }
        manager.prefetch([ObjectRequest(url: server.url("/prefetched"))])
        #expect(await waitUntil { server.requestCount(for: "/prefetched") == 1 })
        #expect(server.totalRequestCount == 5)
        #expect(manager.loadRateLimiter?.waitingCount == 0)
    }
}
