import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// A manager that is deallocated cancels its loads and frees everything. Weak
/// references to the manager, its URLSession loader, its file cache, its users, what their
/// handlers capture, its decoders and the objects it decoded all become nil (checked with
/// bounded waits); the loopback server sees every in-flight connection closed; users of loads
/// under way are told `.cancelled(.managerShutDown)` once, and an event stream being iterated
/// ends instead of hanging. Then, many managers created and dropped in a row leave no decoded
/// object alive.
@Suite(.offCooperativePool) struct ManagerLifetimeTests {
    /// Counts its live instances.
    final class Tracked: Sendable {
        static let live = Lock<Int>(0)
        let bytes: Data
        init(_ bytes: Data) {
            self.bytes = bytes
            Self.live.withLock { $0 += 1 }
        }
        deinit { Self.live.withLock { $0 -= 1 } }
    }

    /// Something a closure or a decoder captures, to see whether it is freed.
    final class Sentinel: Sendable {}

    struct TrackedDecoder: ObjectDecoding {
        let sentinel: Sentinel
        var identifier: String { "test.tracked" }
        func decode(_ data: LoadedData) throws -> Tracked { Tracked(try data.bytes()) }
    }

    static func makeServer() throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.setFallback { request in
            let body = FramedBody.make(seed: request.path, count: 30_000)
            if request.path.hasPrefix("/stall/") { return .ok(body).behaving(.stall(afterBodyBytes: 1_000)) }
            return .ok(body)
        }
        return server
    }

    @Test func aDeallocatedManagerCancelsItsLoadsAndFreesEverything() async throws {
        let tally = ReliabilityTally(item: "memory")
        let name = "one manager"
        tally.addCase(name)
        let server = try Self.makeServer()
        defer { server.stop() }
        let directory = TemporaryDirectory(prefix: "reliability-lifetime")

        let weakManager = WeakBox<ObjectManager>(nil)
        let weakLoader = WeakBox<URLSessionDataLoader>(nil)
        let weakCache = WeakBox<FileCache>(nil)
        var sentinels: [WeakBox<Sentinel>] = []
        var objects: [WeakBox<Tracked>] = []
        var users: [WeakBox<RecordingUser<TrackedDecoder>>] = []
        var loading: [RecordingUser<TrackedDecoder>] = []
        let streamEnded = Lock<Int>(0)
        let streamError = Lock<ManagedCacheError?>(nil)
        let stalled = 3  // + 2 prefetches + 1 stream: URLSession's 6 connections per host, all in flight
        do {
            let http = URLSessionDataLoader()
            let cache = try FileCache(directory: directory.url)
            let eventSentinel = Sentinel()
            let decoderSentinel = Sentinel()
            weakLoader.object = http
            weakCache.object = cache
            sentinels += [WeakBox(eventSentinel), WeakBox(decoderSentinel)]
            let manager = makeNetworkManager(fileCache: cache) { configuration in
                configuration.dataLoader = DefaultDataLoader(http: http)
                configuration.eventHandler = { _ in _ = eventSentinel }
                configuration.prefetchConcurrency = 2
            }
            weakManager.object = manager
            let decoder = TrackedDecoder(sentinel: decoderSentinel)

            // Finished loads: their objects live in the users and the memory cache.
            let finished = (0..<3).map { index in
                let handlerSentinel = Sentinel()
                sentinels.append(WeakBox(handlerSentinel))
                return RecordingUser(ObjectRequest(url: server.url("/ok/\(index)")), decoder: decoder) { _ in _ = handlerSentinel }
            }
            for user in finished { manager.manage(user) }
            #expect(await waitUntil { finished.allSatisfy { $0.objects.count == 1 } })
            objects = finished.compactMap { $0.objects.first.map(WeakBox.init) }
            users += finished.map(WeakBox.init)

            // Loads under way (stalled by the server), for users on both delivery paths, two
            // prefetches in flight and two queued, and an event stream being iterated.
            for index in 0..<stalled {
                let handlerSentinel = Sentinel()
                sentinels.append(WeakBox(handlerSentinel))
                let user = RecordingUser(
                    ObjectRequest(url: server.url("/stall/\(index)")), decoder: decoder,
                    delivery: index == 0 ? .mainQueue : .immediate
                ) { _ in _ = handlerSentinel }
                loading.append(user)
                manager.manage(user)
            }
            manager.prefetch((0..<4).map { ObjectRequest(url: server.url("/stall/prefetch-\($0)")) })
            let stream = manager.loadEvents(for: ObjectRequest(url: server.url("/stall/stream")), decoder: decoder)
            Task {
                do {
                    for try await _ in stream {}
                } catch let error as ManagedCacheError {
                    streamError.withLock { $0 = error }
                } catch {}
                streamEnded.withLock { $0 += 1 }
            }
            let inFlight = stalled + 2 + 1
            let started = await waitUntil { server.openConnectionCount >= inFlight && manager.activeLoadCount == inFlight }
            tally.check(started, name, "\(server.openConnectionCount) connections, \(manager.activeLoadCount) loads, expected \(inFlight)")
            users += loading.map(WeakBox.init)
        }
        let weakSentinels = sentinels
        let weakObjects = objects
        let weakUsers = users
        let loadingUsers = loading
        loading.removeAll()

        // The last reference to the manager is gone.
        tally.check(await waitUntil { weakManager.isGone }, name, "the manager was not deallocated")
        tally.check(
            await waitUntil { server.openConnectionCount == 0 }, name,
            "\(server.openConnectionCount) connections still open: loads were not cancelled on the wire")
        tally.check(await waitUntil { weakLoader.isGone }, name, "the URLSession loader was not freed")
        tally.check(await waitUntil { weakCache.isGone }, name, "the file cache was not freed")
        tally.check(regularFiles(in: directory.url, under: "loading").isEmpty, name, "partial downloads left in loading/")
        let told = await waitUntil { loadingUsers.allSatisfy { $0.finalCallbackCount >= 1 } }
        tally.check(
            told && loadingUsers.allSatisfy { $0.errors == [.cancelled(.managerShutDown)] }, name,
            "users of loads under way were told \(loadingUsers.map(\.errors)), expected one .cancelled(.managerShutDown) each")
        tally.check(await waitUntil { streamEnded.withLock { $0 } == 1 }, name, "the event stream never ended: its consumer hangs")
        tally.check(
            streamError.withLock { $0 } == .cancelled(.managerShutDown), name,
            "the event stream ended with \(String(describing: streamError.withLock { $0 }))")

        // The users go too: nothing the manager had kept them, their handlers, the decoder or the objects alive.
        _ = consume loadingUsers
        tally.check(await waitUntil { weakUsers.allSatisfy(\.isGone) }, name, "\(weakUsers.filter { !$0.isGone }.count) users still alive")
        tally.check(
            await waitUntil { weakSentinels.allSatisfy(\.isGone) }, name,
            "\(weakSentinels.filter { !$0.isGone }.count) captured handlers or decoders still alive")
        tally.check(await waitUntil { weakObjects.allSatisfy(\.isGone) }, name, "decoded objects still alive")
        tally.add(weakSentinels.count + weakObjects.count + weakUsers.count + 3, to: "weak references checked")

        // Many managers in a row, each with finished and stalled loads, leave nothing behind.
        let rounds = 20
        let liveBefore = Tracked.live.withLock { $0 }
        for round in 0..<rounds {
            let roundName = "manager \(round + 2)"
            tally.addCase(roundName)
            let weak = WeakBox<ObjectManager>(nil)
            do {
                let manager = makeNetworkManager()
                weak.object = manager
                let decoder = TrackedDecoder(sentinel: Sentinel())
                let users = (0..<6).map { index in
                    RecordingUser(
                        ObjectRequest(url: server.url(index < 3 ? "/ok/r\(round)-\(index)" : "/stall/r\(round)-\(index)")),
                        decoder: decoder)
                }
                for user in users { manager.manage(user) }
                _ = await waitUntil { users.prefix(3).allSatisfy { $0.finalCallbackCount == 1 } }
            }
            tally.check(await waitUntil { weak.isGone }, roundName, "not deallocated")
        }
        tally.check(
            await waitUntil { Tracked.live.withLock { $0 } <= liveBefore }, "many managers",
            "\(Tracked.live.withLock { $0 } - liveBefore) decoded objects outlived their managers and users")
        tally.check(await waitUntil { server.openConnectionCount == 0 }, "many managers", "connections left open")
        tally.add(rounds + 1, to: "managers freed")
        tally.report()
        #expect(tally.failureCount == 0)
    }
}
