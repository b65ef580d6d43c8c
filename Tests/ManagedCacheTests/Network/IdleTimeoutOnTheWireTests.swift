import Foundation
import LoopbackServer
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// The idle timeout measures silence on a request that is on the wire, never the time a load
/// waits for one of its host's connections. Checked against the loopback
/// server's log of the requests it received.
@Suite struct IdleTimeoutOnTheWireTests {
    /// The idle timeout of these tests: half of one slow load (20 s), 20 times the silence between
    /// its chunks (0.5 s). Long: on a loaded 2-core machine (two busy loops and a build beside
    /// the suite) every transfer of the process once went silent for more than 2.5 s, the
    /// timeout these tests had, and loads that only waited their turn were told `.timedOut`. A
    /// verdict here must not depend on how busy the machine is, only on where the wait was.
    static let idle = 10.0

    /// A body that arrives in 40 chunks of 1,250 bytes, one every 0.5 s: never silent for long,
    /// but 20 s in all, so the host's connections stay busy for twice the idle timeout.
    static let slow = LoopbackResponse.ok(fixtureBody("slow", count: 50_000)).behaving(.drip(chunkSize: 1_250, interval: 0.5))

    /// A body sent at once: a load that waited its turn ends as soon as it gets a connection.
    static let fast = LoopbackResponse.ok(fixtureBody("fast", count: 50_000))

    @Test func loadsQueuedBehindTheHostsConnectionLimitDoNotTimeOut() async throws {
        let server = try LoopbackServer()
        server.setRoute("/slow", Self.slow)
        server.setRoute("/fast", Self.fast)
        let manager = makeNetworkManager { $0.policy.timeout = Self.idle }
        // Nine loads of one host: six connections (URLSession's default) carry six slow ones,
        // and three more wait for a connection for about 20 s, twice the idle timeout.
        let slowUsers = (0..<6).map { RecordingUser(ObjectRequest(url: server.url("/slow?n=\($0)")), decoder: DataDecoder()) }
        for user in slowUsers { manager.manage(user) }
        #expect(await waitUntil { server.requestCount(for: "/slow") == 6 })
        let queuedUsers = (0..<3).map { RecordingUser(ObjectRequest(url: server.url("/fast?n=\($0)")), decoder: DataDecoder()) }
        for user in queuedUsers { manager.manage(user) }
        let users = slowUsers + queuedUsers

        #expect(await waitUntil { users.allSatisfy { $0.objects.count + $0.errors.count == 1 } })
        let arrived = Set(server.recordedRequests(for: "/slow").map(\.query))
        let arrivedQueued = Set(server.recordedRequests(for: "/fast").map(\.query))
        for (index, user) in slowUsers.enumerated() {
            let reached = arrived.contains("n=\(index)")
            #expect(user.errors.isEmpty, "slow load \(index) (reached the server: \(reached)) failed: \(user.errors)")
            #expect(user.objects.first?.count == 50_000)
        }
        for (index, user) in queuedUsers.enumerated() {
            let reached = arrivedQueued.contains("n=\(index)")
            #expect(user.errors.isEmpty, "queued load \(index) (reached the server: \(reached)) failed: \(user.errors)")
            #expect(user.objects.first?.count == 50_000)
        }
        #expect(arrived.count + arrivedQueued.count == 9, "every load reached the server")
        #expect(server.peakOpenConnectionCount <= 6, "never more than the host's six connections at once")
        // The scenario happened: the queued three reached the server more than an idle timeout
        // after the first slow one (a lower bound: a 20 s body cannot finish sooner, however fast
        // the machine).
        let firstSlow = server.recordedRequests(for: "/slow").map(\.receivedAt).min()
        let firstQueued = server.recordedRequests(for: "/fast").map(\.receivedAt).min()
        if let firstSlow, let firstQueued {
            #expect(firstQueued.timeIntervalSince(firstSlow) > Self.idle)
        }
    }

    @Test func aStalledConnectionStillTimesOutWhileQueuedLoadsWait() async throws {
        let server = try LoopbackServer()
        server.setRoute("/stall", .ok(fixtureBody("stall", count: 10_000)).behaving(.stall(afterBodyBytes: 100)))
        server.setRoute("/fast", Self.fast)
        let manager = makeNetworkManager { $0.policy.timeout = Self.idle }
        // Six stalled transfers take all six connections of the host...
        let stalled = (0..<6).map { RecordingUser(ObjectRequest(url: server.url("/stall?n=\($0)")), decoder: DataDecoder()) }
        for user in stalled { manager.manage(user) }
        #expect(await waitUntil { server.requestCount(for: "/stall") == 6 })
        // ...and three more loads wait behind them, until the stalled ones time out.
        let queued = (0..<3).map { RecordingUser(ObjectRequest(url: server.url("/fast?n=\($0)")), decoder: DataDecoder()) }
        for user in queued { manager.manage(user) }

        #expect(await waitUntil { (stalled + queued).allSatisfy { $0.objects.count + $0.errors.count == 1 } })
        for user in stalled {
            #expect(user.errors == [.timedOut(seconds: Self.idle)], "a stalled connection times out")
        }
        let stalledLog = server.recordedRequests(for: "/stall")
        let queuedLog = server.recordedRequests(for: "/fast")
        #expect(stalledLog.count == 6, "each timed-out load had reached the server")
        for (index, user) in queued.enumerated() {
            #expect(user.errors.isEmpty, "queued load \(index) failed: \(user.errors)")
            #expect(user.objects.first?.count == 50_000)
        }
        #expect(queuedLog.count == 3)
        // The queued loads reached the server only once stalled ones had given up their
        // connections, more than an idle timeout after the stalled ones arrived (a lower bound:
        // the stalled ones cannot time out sooner): they waited longer than the idle timeout
        // without timing out. (The server's peak connection count is no proof here: it may
        // briefly count a closed connection beside its successor.)
        if let firstQueued = queuedLog.map(\.receivedAt).min(), let firstStalled = stalledLog.map(\.receivedAt).min() {
            #expect(firstQueued.timeIntervalSince(firstStalled) > Self.idle)
        }
    }

    #if !canImport(Darwin)
    /// On Linux one engine thread hands every loader's tasks to its session, waiting there for
    /// FoundationNetworking's work queue. A load waiting for that thread is not on the wire: held
    /// for one and a half idle timeouts, it has not timed out, and once released it succeeds.
    /// (Were the wait counted, it would time out during the hold whatever the machine's speed; a
    /// load that reached the thread only after the hold proves nothing but cannot fail.) The
    /// suite's long idle timeout: with half a second, a starved machine once took longer than
    /// that between releasing the load and its first byte, and the released load timed out.
    @Test func aLoadWaitingToBeHandedToTheSessionDoesNotTimeOut() async throws {
        let server = try LoopbackServer()
        server.setRoute("/fast", Self.fast)
        let manager = makeNetworkManager { $0.policy.timeout = Self.idle }
        let holding = Lock(false)
        let release = DispatchSemaphore(value: 0)
        EngineThreads.starter.async {
            holding.withLock { $0 = true }
            _ = release.wait(timeout: .now() + waitBound)
        }
        #expect(await waitUntil { holding.withLock { $0 } })
        let user = RecordingUser(ObjectRequest(url: server.url("/fast?held")), decoder: DataDecoder())
        manager.manage(user)
        try await Task.sleep(for: .seconds(Self.idle * 1.5))
        #expect(server.requestCount(for: "/fast") == 0, "the starter thread was held")
        #expect(user.errors.isEmpty, "held longer than the idle timeout, not timed out: \(user.errors)")
        release.signal()
        #expect(await waitUntil { user.objects.count + user.errors.count == 1 })
        #expect(user.errors.isEmpty, "\(user.errors)")
        #expect(user.objects.first?.count == 50_000)
    }
    #endif
}

/// `URLSessionDataLoader`'s per-host limit, driven directly.
@Suite struct HostConnectionLimitTests {
    /// Records what the loader tells a receiver.
    final class Receiver: DataLoadReceiver {
        private let log = Lock<[String]>([])
        var entries: [String] { log.withLock { $0 } }
        func didReceive(response: DataLoadResponse) throws { log.withLock { $0.append("response") } }
        func didReceive(_ chunk: Data) throws {}
        func requestIsWaitingForConnection() { log.withLock { $0.append("waiting") } }
        func requestDidStart() { log.withLock { $0.append("started") } }
    }

    /// What a receiver is told between the host's admission and `requestDidStart()`: on Linux
    /// the load waits for the thread that hands it to the session.
    #if canImport(Darwin)
    static let handOff: [String] = []
    #else
    static let handOff = ["waiting"]
    #endif

    @Test func aLoadBeyondTheLimitWaitsSaysSoAndCanBeCancelledWithoutReachingTheServer() async throws {
        let server = try LoopbackServer()
        server.setRoute("/stall", .ok(fixtureBody("stall", count: 10_000)).behaving(.stall(afterBodyBytes: 100)))
        server.setRoute("/next", .ok(Data("next".utf8)))
        let loader = URLSessionDataLoader(maximumConnectionsPerHost: 1)
        let first = Receiver()
        // URLSession's backstop timeout (the request's, plus a second) must not end the stalled
        // load while a starved machine delays this test: it would free the host's connection.
        let running = Task { try await loader.load(DataLoadRequest(url: server.url("/stall"), timeout: 300), receiver: first) }
        #expect(await waitUntil { first.entries.contains("response") })
        #expect(
            Array(first.entries.prefix(Self.handOff.count + 1)) == Self.handOff + ["started"],
            "a load under the limit starts at once, without waiting for a connection: \(first.entries)")

        // Beyond the limit: waits (and says so), is cancelled while waiting, never reaches the server.
        let cancelled = Receiver()
        let waiting = Task { try await loader.load(DataLoadRequest(url: server.url("/next?cancelled")), receiver: cancelled) }
        #expect(await waitUntil { cancelled.entries == ["waiting"] })
        waiting.cancel()
        await #expect(throws: ManagedCacheError.cancelled(.caller)) { try await waiting.value }

        // Another waits, and starts when the first load ends.
        let queued = Receiver()
        let next = Task { try await loader.load(DataLoadRequest(url: server.url("/next?queued")), receiver: queued) }
        #expect(await waitUntil { queued.entries == ["waiting"] })
        running.cancel()
        let response = try await next.value
        #expect(response.statusCode == 200)
        #expect(queued.entries == ["waiting"] + Self.handOff + ["started", "response"])
        #expect(server.requestCount(for: "/next?cancelled") == 0)
        #expect(server.requestCount(for: "/next?queued") == 1)
    }
}
