import Foundation
import LoopbackServer
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Requests carry a priority; the prefetch queue and the loading buffer honour it, and
/// a running load's priority follows what wants it. Against the loopback server.
@Suite struct PriorityTests {
    /// The order in which paths reached the server.
    final class ArrivalLog: Sendable {
        private let paths = Lock<[String]>([])

        /// Answers each of `paths` at once with a small body, logging its arrival.
        init(_ server: LoopbackServer, paths: [String]) {
            for path in paths {
                server.setHandler(path) { [self] _ in
                    self.paths.withLock { $0.append(path) }
                    return .ok(Data(path.utf8))
                }
            }
        }

        var order: [String] { paths.withLock { $0 } }
    }

    @Test func waitingPrefetchesStartHighestPriorityFirstFIFOWithinOne() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/gate", response: .ok(Data("gate".utf8)))
        defer { gate.open() }
        let log = ArrivalLog(server, paths: ["/p0", "/p1", "/p2", "/p3"])
        let manager = makeNetworkManager { $0.prefetchConcurrency = 1 }

        // The one prefetch slot is taken and held: everything after waits in the queue.
        manager.prefetch([ObjectRequest(url: server.url("/gate"))])
        #expect(await waitUntil { gate.arrivals == 1 })
        manager.prefetch(["/p0", "/p1", "/p2"].map { ObjectRequest(url: server.url($0)) })
        manager.prefetch([ObjectRequest(url: server.url("/p3"))], priority: .high)
        // Prefetching a waiting request again changes only its priority.
        manager.prefetch([ObjectRequest(url: server.url("/p1"))], priority: .veryHigh)
        #expect(manager.queuedPrefetchCount == 4)
        #expect(manager.pendingPrefetchCount == 5, "the four waiting and the one running")

        gate.open()
        #expect(await waitUntil { log.order.count == 4 && manager.activeLoadCount == 0 })
        #expect(log.order == ["/p1", "/p3", "/p0", "/p2"])
    }

    @Test func aLowPriorityLoadNeverPushesOutAHigherOne() async throws {
        let server = try LoopbackServer()
        let gates = ["/a", "/b", "/c", "/d"].map { GatedRoute(server, path: $0, response: .ok(Data($0.utf8))) }
        defer { for gate in gates { gate.open() } }
        let manager = makeNetworkManager { $0.loadingBufferSize = 2 }
        func user(_ path: String, _ priority: LoadPriority) -> RecordingUser<BlobDecoder> {
            RecordingUser(ObjectRequest(url: server.url(path), priority: priority), decoder: BlobDecoder())
        }
        let a = user("/a", .high)
        let b = user("/b", .normal)
        let c = user("/c", .low)
        let d = user("/d", .normal)

        manager.manage(a)
        manager.manage(b)
        #expect(await waitUntil { gates[0].arrivals == 1 && gates[1].arrivals == 1 })
        // The buffer is full of higher priorities: the newcomer is the one pushed out.
        manager.manage(c)
        #expect(await waitUntil { c.errors == [.cancelled(.loadingBufferOverflow)] })
        #expect(a.errors.isEmpty && b.errors.isEmpty)
        // Among equals the buffer stays FIFO, and the .high load is never the one to go.
        manager.manage(d)
        #expect(await waitUntil { b.errors == [.cancelled(.loadingBufferOverflow)] })
        #expect(a.errors.isEmpty)

        for gate in gates { gate.open() }
        #expect(await waitUntil { a.objects.count == 1 && d.objects.count == 1 })
        #expect(a.objects.map(\.text) == ["/a"] && d.objects.map(\.text) == ["/d"])
        #expect(manager.statistics.loadsCancelledByBuffer == 2)
    }

    @Test func loadsHeldBackForAConnectionGoOnTheWireHighestPriorityFirst() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/gate", response: .ok(Data("gate".utf8)))
        defer { gate.open() }
        let log = ArrivalLog(server, paths: ["/low", "/normal", "/raised", "/high"])
        // One connection to the host: everything after the held request waits in the loader.
        let loader = URLSessionDataLoader(maximumConnectionsPerHost: 1)
        let manager = makeNetworkManager { $0.dataLoader = loader }
        func user(_ path: String, _ priority: LoadPriority) -> RecordingUser<BlobDecoder> {
            RecordingUser(ObjectRequest(url: server.url(path), priority: priority), decoder: BlobDecoder())
        }
        let held = user("/gate", .normal)
        manager.manage(held)
        #expect(await waitUntil { gate.arrivals == 1 })
        let users = [user("/low", .low), user("/normal", .normal), user("/raised", .veryLow), user("/high", .high)]
        for waiting in users { manager.manage(waiting) }
        // A load raised while it waits for the connection goes ahead of the others.
        let joiner = user("/raised", .veryHigh)
        manager.manage(joiner)
        // All four are held back before the connection frees (their tasks start in any order).
        #expect(await waitUntil { loader.connectionCounts(forHostOf: server.url("/gate")).waiting == 4 })

        gate.open()
        #expect(await waitUntil { users.allSatisfy { $0.objects.count == 1 } && joiner.objects.count == 1 })
        #expect(log.order == ["/raised", "/high", "/normal", "/low"])
    }

    /// A load whose user left (a cell reused for another row) goes on, but after the loads still
    /// wanted: when a scroll stops, the rows on screen reach the wire before the rows scrolled
    /// past. The same order holds for the load rate limit's tokens (`LoadRateLimiterTests`).
    @Test func aLoadWhoseUsersLeftGoesOnTheWireAfterTheWantedOnes() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/gate", response: .ok(Data("gate".utf8)))
        defer { gate.open() }
        let log = ArrivalLog(server, paths: ["/scrolled-past", "/on-screen-1", "/on-screen-2"])
        let loader = URLSessionDataLoader(maximumConnectionsPerHost: 1)
        let manager = makeNetworkManager { $0.dataLoader = loader }
        let held = RecordingUser(ObjectRequest(url: server.url("/gate")), decoder: BlobDecoder())
        manager.manage(held)
        #expect(await waitUntil { gate.arrivals == 1 })
        let cell = RecordingUser(ObjectRequest(url: server.url("/scrolled-past")), decoder: BlobDecoder())
        manager.manage(cell)
        #expect(await waitUntil { loader.connectionCounts(forHostOf: server.url("/gate")).waiting == 1 })
        // The cell shows another row now; its first row's load goes on without it.
        cell.setRequest(ObjectRequest(url: server.url("/on-screen-1")))
        manager.manage(cell)
        let other = RecordingUser(ObjectRequest(url: server.url("/on-screen-2")), decoder: BlobDecoder())
        manager.manage(other)
        #expect(await waitUntil { loader.connectionCounts(forHostOf: server.url("/gate")).waiting == 3 })

        gate.open()
        #expect(await waitUntil { log.order.count == 3 })
        // The two rows on screen share a priority; their tasks reached the wait in either order.
        #expect(Set(log.order.prefix(2)) == ["/on-screen-1", "/on-screen-2"])
        #expect(log.order.last == "/scrolled-past")
    }

    @Test func aUserJoiningAPrefetchRaisesItsLoadInTheBuffer() async throws {
        let server = try LoopbackServer()
        let gates = ["/shared", "/other"].map { GatedRoute(server, path: $0, response: .ok(Data($0.utf8))) }
        defer { for gate in gates { gate.open() } }
        let manager = makeNetworkManager { $0.loadingBufferSize = 1 }
        manager.prefetch([ObjectRequest(url: server.url("/shared"))], decoder: BlobDecoder())
        #expect(await waitUntil { gates[0].arrivals == 1 })

        // A .high user joins the running prefetch: the load is now a .high entry of the buffer,
        let joiner = RecordingUser(ObjectRequest(url: server.url("/shared"), priority: .high), decoder: BlobDecoder())
        manager.manage(joiner)
        // so a .normal newcomer is the one pushed out when the buffer of one overflows.
        let newcomer = RecordingUser(ObjectRequest(url: server.url("/other")), decoder: BlobDecoder())
        manager.manage(newcomer)
        #expect(await waitUntil { newcomer.errors == [.cancelled(.loadingBufferOverflow)] })

        for gate in gates { gate.open() }
        #expect(await waitUntil { joiner.objects.count == 1 })
        #expect(joiner.errors.isEmpty)
        #expect(gates[0].arrivals == 1)
    }
}

/// Prefetching is started and cancelled per request, as a collection view's prefetch
/// data source does.
@Suite struct PrefetchCancellationTests {
    @Test func aCancelledPrefetchNobodyJoinedStopsAndTheOthersGoOn() async throws {
        let server = try LoopbackServer()
        let gates = ["/x", "/y"].map { GatedRoute(server, path: $0, response: .ok(fixtureBody($0, count: 4_096))) }
        defer { for gate in gates { gate.open() } }
        let manager = makeNetworkManager { $0.prefetchConcurrency = 2 }
        let x = ObjectRequest(url: server.url("/x"))
        let y = ObjectRequest(url: server.url("/y"))
        manager.prefetch([x, y])
        #expect(await waitUntil { gates[0].arrivals == 1 && gates[1].arrivals == 1 })

        manager.cancelPrefetching([x])
        #expect(manager.activeLoadCount == 1)
        #expect(manager.statistics.loadsCancelled == 1)
        for gate in gates { gate.open() }
        #expect(await waitUntil { manager.activeLoadCount == 0 })

        // y's bytes were kept; x's download stopped, so its user loads it again.
        let userY = RecordingUser(y, decoder: BlobDecoder())
        let userX = RecordingUser(x, decoder: BlobDecoder())
        manager.manage(userY)
        manager.manage(userX)
        #expect(await waitUntil { userY.objects.count == 1 && userX.objects.count == 1 })
        #expect(userY.origins == [.undecodedData])
        #expect(userX.origins == [.network])
        #expect(gates[0].arrivals == 2 && gates[1].arrivals == 1)
    }

    @Test func aCancelledPrefetchThatAUserJoinedKeepsGoing() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/z", response: .ok(fixtureBody("z", count: 4_096)))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let z = ObjectRequest(url: server.url("/z"))
        manager.prefetch([z], decoder: BlobDecoder())
        #expect(await waitUntil { gate.arrivals == 1 })
        let user = RecordingUser(z, decoder: BlobDecoder())
        manager.manage(user)

        manager.cancelPrefetching([z])
        #expect(manager.activeLoadCount == 1)
        gate.open()
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.errors.isEmpty)
        #expect(gate.arrivals == 1)
        #expect(manager.statistics.loadsCancelled == 0)
    }

    /// A user joining a data-only prefetch frees its prefetch slot; a queued prefetch of the user's
    /// own key that this starts must find the key's handler already loading (found under
    /// AddressSanitizer's timing: the handler was started twice).
    @Test func aUserJoiningAPrefetchWhileItsOwnKeyIsQueuedStartsItOnce() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/shared", response: .ok(Data("shared".utf8)))
        defer { gate.open() }
        let manager = makeNetworkManager { $0.prefetchConcurrency = 1 }
        let request = ObjectRequest(url: server.url("/shared"))
        manager.prefetch([request])  // data only: takes the one prefetch slot
        #expect(await waitUntil { gate.arrivals == 1 })
        manager.prefetch([request], decoder: BlobDecoder())  // the same key decoded: queued behind it
        #expect(manager.queuedPrefetchCount == 1)
        #expect(manager.pendingPrefetchCount == 2)

        let user = RecordingUser(request, decoder: BlobDecoder())
        manager.manage(user)
        gate.open()
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects.map(\.text) == ["shared"])
        #expect(server.requestCount(for: "/shared") == 1)
    }

    @Test func cancellingAQueuedPrefetchDropsItBeforeItStarts() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/first", response: .ok(Data("first".utf8)))
        defer { gate.open() }
        let log = PriorityTests.ArrivalLog(server, paths: ["/queued", "/kept"])
        let manager = makeNetworkManager { $0.prefetchConcurrency = 1 }
        manager.prefetch([ObjectRequest(url: server.url("/first"))])
        #expect(await waitUntil { gate.arrivals == 1 })
        manager.prefetch(["/queued", "/kept"].map { ObjectRequest(url: server.url($0)) })
        #expect(manager.queuedPrefetchCount == 2)
        #expect(manager.pendingPrefetchCount == 3)

        manager.cancelPrefetching([ObjectRequest(url: server.url("/queued"))])
        #expect(manager.queuedPrefetchCount == 1)
        #expect(manager.pendingPrefetchCount == 2)
        gate.open()
        #expect(await waitUntil { log.order == ["/kept"] && manager.activeLoadCount == 0 })
        #expect(log.order == ["/kept"])
    }
}
