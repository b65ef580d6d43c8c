import Foundation
import LoopbackServer
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Prefetching that reports: what became of each request (loaded, already cached, failed with its
/// typed error, cancelled), progress as counts, the `async` and callback forms, against the
/// loopback server and a real `FileCache`.
@Suite(.offCooperativePool) struct PrefetchReportTests {
    /// Collects progress values, in the order they came.
    final class ProgressLog: Sendable {
        private let values = Lock<[PrefetchProgress]>([])
        func append(_ progress: PrefetchProgress) { values.withLock { $0.append(progress) } }
        var all: [PrefetchProgress] { values.withLock { $0 } }
    }

    @Test func theReportSaysWhatBecameOfEachRequestInOrderWithProgressAsCounts() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a", .ok(Data("a".utf8)))
        server.setRoute("/b", .status(404))
        server.setRoute("/c", .ok(Data("c".utf8)))
        let directory = TemporaryDirectory()
        let manager = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        // /c's bytes are in the file cache before the batch.
        let first = await manager.prefetchAndWait([ObjectRequest(url: server.url("/c"))])
        #expect(first.results.map(\.outcome) == [.loaded(.network)])

        let requests = [
            ObjectRequest(url: server.url("/a")), ObjectRequest(url: server.url("/b")), ObjectRequest(url: server.url("/c")),
            ObjectRequest(url: URL(string: "unsupported-scheme://host/d")!),
        ]
        let log = ProgressLog()
        let report = await manager.prefetchAndWait(requests) { log.append($0) }
        #expect(report.results.map(\.request) == requests)
        #expect(report.results[0].outcome == .loaded(.network))
        #expect(report.results[1].outcome == .failed(.httpStatus(code: 404)))
        #expect(report.results[2].outcome == .alreadyCached(.fileCache))
        if case .failed(.invalidRequest) = report.results[3].outcome {
        } else {
            Issue.record("expected an invalid request, got \(report.results[3].outcome)")
        }
        #expect(report.counts.total == 4 && report.counts.finished == 4)
        #expect(report.counts.loaded == 1 && report.counts.alreadyCached == 1 && report.counts.failed == 2 && report.counts.cancelled == 0)
        #expect(!report.isComplete)
        #expect(report.failures.map(\.request) == [requests[1], requests[3]])
        // Every outcome was told, in order, before the report; the last progress is the report's counts.
        #expect(await waitUntil { log.all.count == 4 })
        #expect(log.all.map(\.finished) == [1, 2, 3, 4])
        #expect(log.all.last == report.counts)
        #expect(manager.pendingPrefetchCount == 0)
        #expect(try FileCache(directory: directory.url).entry(forKey: requests[0].dataKey) != nil)
    }

    @Test func withADecoderTheObjectIsInMemoryAndASecondPrefetchFindsItThere() async throws {
        let server = try LoopbackServer()
        server.setRoute("/object", .ok(Data("object".utf8)))
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/object"))
        let report = await manager.prefetchAndWait([request], decoder: BlobDecoder())
        #expect(report.results.map(\.outcome) == [.loaded(.network)])
        #expect(report.isComplete)
        #expect(manager.cachedObject(for: request, decoder: BlobDecoder())?.text == "object")
        let again = await manager.prefetchAndWait([request], decoder: BlobDecoder())
        #expect(again.results.map(\.outcome) == [.alreadyCached(.memory)])
        #expect(server.requestCount(for: "/object") == 1)
    }

    @Test func cancellingReportsCancelledForRunningAndQueuedPrefetches() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/held", response: .ok(Data("held".utf8)))
        defer { gate.open() }
        server.setRoute("/queued", .ok(Data("queued".utf8)))
        let manager = makeNetworkManager { $0.prefetchConcurrency = 1 }
        let requests = [ObjectRequest(url: server.url("/held")), ObjectRequest(url: server.url("/queued"))]
        let reports = Lock<[PrefetchReport]>([])
        manager.prefetch(requests) { report in reports.withLock { $0.append(report) } }
        #expect(await waitUntil { gate.arrivals == 1 })
        #expect(manager.pendingPrefetchCount == 2)
        manager.cancelPrefetching()
        #expect(await waitUntil { reports.withLock { $0.count } == 1 })
        let report = try #require(reports.withLock { $0.first })
        #expect(report.results.map(\.outcome) == [.cancelled, .cancelled])
        #expect(manager.pendingPrefetchCount == 0)
        #expect(server.requestCount(for: "/queued") == 0)
    }

    @Test func cancellingTheAwaitingTaskCancelsItsPrefetchesAndReturns() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/held", response: .ok(Data("held".utf8)))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/held"))
        let waiting = Task { await manager.prefetchAndWait([request], decoder: BlobDecoder()) }
        #expect(await waitUntil { gate.arrivals == 1 })
        waiting.cancel()
        let report = await waiting.value
        #expect(report.results.map(\.outcome) == [.cancelled])
        #expect(await waitUntil { manager.activeLoadCount == 0 })
    }

    @Test func aUserThatJoinsAPrefetchKeepsItsLoadAndThePrefetchReportsIt() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/shared", response: .ok(Data("shared".utf8)))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/shared"))
        let reports = Lock<[PrefetchReport]>([])
        manager.prefetch([request], decoder: BlobDecoder()) { report in reports.withLock { $0.append(report) } }
        #expect(await waitUntil { gate.arrivals == 1 })
        let user = RecordingUser(request, decoder: BlobDecoder())
        manager.manage(user)
        gate.open()
        #expect(await waitUntil { reports.withLock { $0.count } == 1 && user.objects.count == 1 })
        #expect(reports.withLock { $0.first?.results.map(\.outcome) } == [.loaded(.network)])
        #expect(server.requestCount(for: "/shared") == 1)
    }

    @Test func aReleasedManagerAnswersItsReportingPrefetches() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/held", response: .ok(Data("held".utf8)))
        defer { gate.open() }
        let reports = Lock<[PrefetchReport]>([])
        do {
            let manager = makeNetworkManager()
            manager.prefetch([ObjectRequest(url: server.url("/held"))]) { report in reports.withLock { $0.append(report) } }
            #expect(await waitUntil { gate.arrivals == 1 })
        }
        #expect(await waitUntil { reports.withLock { $0.count } == 1 })
        #expect(reports.withLock { $0.first?.results.map(\.outcome) } == [.cancelled])
    }

    /// "Download these for offline use, pinned": bytes a prefetch downloads are committed pinned,
    /// bytes it finds already cached are pinned by key, and bytes over the pinned quota are
    /// reported not pinned (their commit is refused: nothing of them is left in the file cache).
    @Test func aPinningPrefetchPinsWhatItLoadsAndWhatItFindsCachedAndReportsAPinItCannotMake() async throws {
        let server = try LoopbackServer()
        server.setRoute("/new", .ok(Data(repeating: 1, count: 400)))
        server.setRoute("/cached", .ok(Data(repeating: 2, count: 400)))
        server.setRoute("/big", .ok(Data(repeating: 3, count: 2_000)))
        let directory = TemporaryDirectory()
        let cache = try FileCache(directory: directory.url, configuration: .init(pinnedByteLimit: 1_500))
        let manager = makeNetworkManager(fileCache: cache)
        _ = await manager.prefetchAndWait([ObjectRequest(url: server.url("/cached"))])  // cached, unpinned
        #expect(cache.pinnedEntries().isEmpty)

        let pinned = PolicyOverrides(pinsInFileCache: true)
        let requests = ["/new", "/cached", "/big"].map { ObjectRequest(url: server.url($0), policy: pinned) }
        let report = await manager.prefetchAndWait(requests)
        #expect(report.results[0].outcome == .loaded(.network))
        #expect(report.results[1].outcome == .alreadyCached(.fileCache))
        if case .notPinned = report.results[2].outcome {
        } else {
            Issue.record("expected the pin over the quota to be reported, got \(report.results[2].outcome)")
        }
        #expect(Set(cache.pinnedEntries().map(\.key)) == Set([requests[0].dataKey, requests[1].dataKey]))
        #expect(cache.entry(forKey: requests[2].dataKey) == nil, "a pinned commit over the quota leaves nothing")
        #expect(!report.isComplete && report.counts.failed == 1 && report.pinFailures.map(\.request) == [requests[2]])
    }

    /// A plain prefetch (no report) that pins pins the bytes it finds already cached too.
    @Test func aPrefetchWithoutAReportPinsTheBytesItFindsCached() async throws {
        let server = try LoopbackServer()
        server.setRoute("/cached", .ok(Data("cached".utf8)))
        let directory = TemporaryDirectory()
        let cache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: cache)
        _ = await manager.prefetchAndWait([ObjectRequest(url: server.url("/cached"))])
        manager.prefetch([ObjectRequest(url: server.url("/cached"), policy: PolicyOverrides(pinsInFileCache: true))])
        #expect(await waitUntil { cache.pinnedEntries().count == 1 })
        #expect(server.requestCount(for: "/cached") == 1)
    }

    @Test func anEmptyPrefetchReportsAtOnce() async {
        let report = await makeNetworkManager().prefetchAndWait([])
        #expect(report.results.isEmpty && report.isComplete && report.counts.fractionCompleted == 1)
    }

    /// Prefetched twice while it runs: both callers hear the one load's outcome.
    @Test func aRequestPrefetchedAgainWhileItRunsReportsToBothCallers() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/twice", response: .ok(Data("twice".utf8)))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/twice"))
        let reports = Lock<[PrefetchReport]>([])
        manager.prefetch([request]) { report in reports.withLock { $0.append(report) } }
        #expect(await waitUntil { gate.arrivals == 1 })
        manager.prefetch([request], priority: .high) { report in reports.withLock { $0.append(report) } }
        gate.open()
        #expect(await waitUntil { reports.withLock { $0.count } == 2 })
        #expect(reports.withLock { $0.map { $0.results.map(\.outcome) } } == [[.loaded(.network)], [.loaded(.network)]])
        #expect(server.requestCount(for: "/twice") == 1)
    }
}
