import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// The idle timeout measures silence on a request that is on the wire, never the time a load
/// waits for one of its host's connections. Checked against the loopback
/// server's log of the requests it received.
@Suite struct IdleTimeoutOnTheWireTests {
    /// The idle timeout of these tests: half of one slow load (5 s), 25 times the silence between
    /// its chunks (0.1 s). (Not less: on a loaded 2-core machine connecting alone can take a
    /// second, and the idle timeout counts from when the request is handed to `URLSession`.)
    static let idle = 2.5

    /// A body that arrives in 50 chunks of 1,000 bytes, one every 0.1 s: never silent for long,
    /// but 5 s in all, so the host's connections stay busy well past the idle timeout.
    static let slow = LoopbackResponse.ok(fixtureBody("slow", count: 50_000)).behaving(.drip(chunkSize: 1_000, interval: 0.1))

    @Test func loadsQueuedBehindTheHostsConnectionLimitDoNotTimeOut() async throws {
        let server = try LoopbackServer()
        server.setRoute("/slow", Self.slow)
        let manager = makeNetworkManager { $0.policy.timeout = Self.idle }
        // Nine loads of one host: six connections (URLSession's default) carry six of them,
        // three wait for a connection for about 5 s, twice the idle timeout.
        let users = (0..<9).map { RecordingUser(ObjectRequest(url: server.url("/slow?n=\($0)")), decoder: DataDecoder()) }
        for user in users { manager.manage(user) }

        #expect(await waitUntil { users.allSatisfy { $0.objects.count + $0.errors.count == 1 } })
        let arrived = Set(server.recordedRequests(for: "/slow").map(\.query))
        for (index, user) in users.enumerated() {
            #expect(user.errors.isEmpty, "load \(index) (reached the server: \(arrived.contains("n=\(index)"))) failed: \(user.errors)")
            #expect(user.objects.first?.count == 50_000)
        }
        #expect(arrived.count == 9, "every load reached the server")
        #expect(server.peakOpenConnectionCount <= 6, "never more than the host's six connections at once")
        // The scenario happened: the last three reached the server more than an idle timeout
        // after the first (a lower bound: a 5 s body cannot finish sooner, however fast the machine).
        let arrivals = server.recordedRequests(for: "/slow").map(\.receivedAt).sorted()
        if arrivals.count == 9 {
            #expect(arrivals[6].timeIntervalSince(arrivals[0]) > Self.idle)
        }
    }

    @Test func aStalledConnectionStillTimesOutWhileQueuedLoadsWait() async throws {
        let server = try LoopbackServer()
        server.setRoute("/stall", .ok(fixtureBody("stall", count: 10_000)).behaving(.stall(afterBodyBytes: 100)))
        server.setRoute("/slow", Self.slow)
        let manager = makeNetworkManager { $0.policy.timeout = Self.idle }
        // Six stalled transfers take all six connections of the host...
        let stalled = (0..<6).map { RecordingUser(ObjectRequest(url: server.url("/stall?n=\($0)")), decoder: DataDecoder()) }
        for user in stalled { manager.manage(user) }
        #expect(await waitUntil { server.requestCount(for: "/stall") == 6 })
        // ...and three more loads wait behind them, until the stalled ones time out.
        let queued = (0..<3).map { RecordingUser(ObjectRequest(url: server.url("/slow?n=\($0)")), decoder: DataDecoder()) }
        for user in queued { manager.manage(user) }

        #expect(await waitUntil { (stalled + queued).allSatisfy { $0.objects.count + $0.errors.count == 1 } })
        for user in stalled {
            #expect(user.errors == [.timedOut(seconds: Self.idle)], "a stalled connection times out")
        }
        let stalledLog = server.recordedRequests(for: "/stall")
        let queuedLog = server.recordedRequests(for: "/slow")
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
        #expect(first.entries.first == "started", "a load under the limit starts at once, without waiting")

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
        #expect(queued.entries == ["waiting", "started", "response"])
        #expect(server.requestCount(for: "/next?cancelled") == 0)
        #expect(server.requestCount(for: "/next?queued") == 1)
    }
}
