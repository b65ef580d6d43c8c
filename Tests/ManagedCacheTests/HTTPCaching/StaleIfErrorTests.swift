import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import ManagedCache

/// Stale-if-error end to end: an app launched with a file cache of expired entries (a real
/// `FileCache` reopened on the directory a previous run filled), the network gone (a refused
/// connection, a reset, a stalled server), through the public `ObjectManager` API: what users
/// receive, with which origin, and that the next load once the network is back revalidates.
@Suite(.offCooperativePool) struct StaleIfErrorTests {
    /// How the network fails on the second run.
    enum Fault: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// The server is gone: its port has no listener, the connection is refused at once.
        case refused
        /// The server sends a response head, then resets the connection.
        case reset
        /// The server sends a response head, then nothing: the idle timeout ends the load.
        case stalled

        var testDescription: String { rawValue }
    }

    /// The idle timeout of a run facing a stalled server. Not shorter: on a loaded 2-core machine
    /// a shorter one can fire before the request reaches the server (either way the load fails
    /// and the copy is shown; only the cause differs).
    static let idleTimeout = 3.0

    static let path = "/feed"

    /// An HTTP date `seconds` from now.
    static func httpDate(_ seconds: Double) -> String {
        HTTPCacheDirectives.formatHTTPDate(Date().addingTimeInterval(seconds))
    }

    /// An app's previous run: loads `path` once through a manager on a `FileCache` in `directory`,
    /// with these caching headers, then lets the manager and the cache go. The entry it leaves
    /// is expired from the start (`max-age=0`, or the `Expires` date passed).
    static func previousRun(
        _ server: LoopbackServer, directory: TemporaryDirectory, cacheControl: String = "max-age=0", expires: String? = nil
    ) async throws {
        server.setRoute(path, .ok(Data("version 1".utf8)).caching(etag: "\"v1\"", cacheControl: cacheControl, expires: expires))
        let manager = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        let first = try await manager.object(for: ObjectRequest(url: server.url(path)), decoder: BlobDecoder())
        #expect(first.text == "version 1")
    }

    /// Makes the network fail as `fault` says for requests of `path`.
    static func breakNetwork(_ fault: Fault, _ server: LoopbackServer) throws {
        switch fault {
        case .refused:
            // The port stays held: after a plain `stop()` another test's server could take it
            // and answer in its place.
            try server.refuseConnections()
        case .reset:
            // No ETag: a 200, never turned into a 304 by the server.
            server.setRoute(path, .ok(Data("version 2".utf8)).behaving(.reset(afterBodyBytes: 0)))
        case .stalled:
            server.setRoute(path, .ok(Data("version 2".utf8)).behaving(.stall(afterBodyBytes: 0)))
        }
    }

    /// The app's new run: a manager on a `FileCache` reopened on `directory`. Retries are on, with
    /// a first delay far past any wait here: a copy shown only after the retries would fail the test.
    /// The idle timeout stays far out (`makeNetworkManager`'s): on a starved machine a short one
    /// could end a load to a live server, or a refused one, before its answer, and a timeout is
    /// rightly hidden by the copy. Only the stalled server's test sets a short one.
    static func newRun(
        _ directory: TemporaryDirectory, configure: (inout ObjectManager.Configuration) -> Void = { _ in }
    ) throws -> ObjectManager {
        let fileCache = try FileCache(directory: directory.url)
        return makeNetworkManager(fileCache: fileCache) { configuration in
            configuration.policy.retry = RetryPolicy(maximumRetries: 3, initialDelay: 600)
            configure(&configuration)
        }
    }

    @Test(arguments: Fault.allCases, [false, true])
    func anAppLaunchedOfflineShowsItsExpiredEntriesThenRevalidatesOnceTheNetworkIsBack(
        fault: Fault, staleWhileRevalidate: Bool
    ) async throws {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        try await Self.previousRun(server, directory: directory)
        try Self.breakNetwork(fault, server)
        let manager = try Self.newRun(directory) { $0.policy.staleWhileRevalidate = staleWhileRevalidate }
        let url = server.url(Self.path)
        // The loads facing the broken network; only those facing the stalled server have a short
        // idle timeout (for this request: the load after the network is back keeps the long one).
        let offline = ObjectRequest(url: url, policy: PolicyOverrides(timeout: fault == .stalled ? Self.idleTimeout : nil))

        // The user gets the last copy, from the file cache, and no error.
        let user = RecordingUser(offline, decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { !user.objects.isEmpty || !user.errors.isEmpty })
        #expect(user.objects.map(\.text) == ["version 1"])
        #expect(user.origins == [.fileCache])
        #expect(user.errors.isEmpty)
        // Told it is stale: under stale-while-revalidate at once (its revalidation under way),
        // else with the failure that kept it from being revalidated.
        if staleWhileRevalidate {
            #expect(user.freshnesses == [.stale(revalidationError: nil)])
        } else {
            #expect(user.freshnesses.count == 1)
            if case .stale(let error?)? = user.freshnesses.first {
                #expect(error.isTransient || error == .timedOut(seconds: Self.idleTimeout), "\(error)")
            } else {
                Issue.record("expected stale with a failure, got \(user.freshnesses)")
            }
        }
        if !staleWhileRevalidate {
            // An `await` caller too (it revalidates in the foreground, so nothing is left running
            // against the broken server; under stale-while-revalidate it would return the memory
            // copy at once and leave a revalidation running).
            let awaited = try await manager.object(for: offline, decoder: BlobDecoder())
            #expect(awaited.text == "version 1")
        }

        guard fault != .refused else {
            // The port stays without a listener: the next load tries the network again (not a
            // fresh memory hit) and falls back again.
            let again = RecordingUser(offline, decoder: BlobDecoder())
            manager.manage(again)
            #expect(await waitUntil { again.objects.map(\.text).contains("version 1") })
            #expect(again.errors.isEmpty)
            // The first copy is in memory now: it is shown again, not its file entry decoded again.
            if !staleWhileRevalidate { #expect(again.origins == [.memory]) }
            #expect(again.freshnesses.allSatisfy { $0.isStale })
            return
        }
        // Under stale-while-revalidate the background revalidation runs with the policy of the
        // load that made the object (the short idle timeout here): the reset case covers it.
        if fault == .stalled && staleWhileRevalidate { return }
        // Under stale-while-revalidate the copy was shown before its revalidation ended: that
        // revalidation, against the broken network, ends first (a later one is what the network
        // being back should answer).
        if staleWhileRevalidate { #expect(await waitUntil { manager.activeLoadCount == 0 }) }
        // The network is back with a new version: the next load revalidates the old copy.
        server.setRoute(Self.path, .ok(Data("version 2".utf8)).caching(etag: "\"v2\"", cacheControl: "max-age=600"))
        let next = RecordingUser(ObjectRequest(url: url), decoder: BlobDecoder())
        manager.manage(next)
        #expect(await waitUntil { next.objects.last?.text == "version 2" || !next.errors.isEmpty })
        #expect(next.objects.last?.text == "version 2")
        #expect(next.origins.last == .network)
        #expect(next.freshnesses.last == .current)
        #expect(next.errors.isEmpty)
        #expect(server.recordedRequests(for: Self.path).last?.header("If-None-Match") == "\"v1\"")
    }

    /// RFC 5861: an error is what would give a 500, 502, 503 or 504; any other status the server
    /// sends is its answer, delivered as the failure.
    @Test(arguments: [
        (404, false), (403, false), (410, false), (429, false), (501, false), (500, true), (502, true), (503, true), (504, true),
    ])
    func anHTTPStatusIsNeverHiddenExceptTheGatewayErrors(status: Int, showsTheCopy: Bool) async throws {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        try await Self.previousRun(server, directory: directory)
        server.setRoute(Self.path, .status(status))
        // No retries: a failure delivered only after them (a 429, a 501) would wait their delay.
        let manager = try Self.newRun(directory) { $0.policy.retry = .none }
        let user = RecordingUser(ObjectRequest(url: server.url(Self.path)), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { !user.objects.isEmpty || !user.errors.isEmpty })
        if showsTheCopy {
            #expect(user.objects.map(\.text) == ["version 1"])
            #expect(user.origins == [.fileCache])
            #expect(user.errors.isEmpty)
        } else {
            #expect(user.objects.isEmpty)
            #expect(user.errors == [.httpStatus(code: status)])
        }
    }

    /// RFC 9111: a `must-revalidate` or `no-cache` response is never shown stale, not even when
    /// it allows stale-if-error; the failure is delivered.
    @Test(arguments: [
        "max-age=0, must-revalidate", "no-cache", "max-age=0, must-revalidate, stale-if-error=86400", "no-cache, stale-if-error=86400",
    ])
    func mustRevalidateAndNoCacheAreNeverShownStale(cacheControl: String) async throws {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        try await Self.previousRun(server, directory: directory, cacheControl: cacheControl)
        try Self.breakNetwork(.refused, server)
        let manager = try Self.newRun(directory) { $0.policy.retry = .none }
        let user = RecordingUser(ObjectRequest(url: server.url(Self.path)), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { !user.objects.isEmpty || !user.errors.isEmpty })
        #expect(user.objects.isEmpty)
        #expect(user.errors.count == 1)
        if case .transport = user.errors.first {} else { Issue.record("expected a transport error, got \(user.errors)") }
    }

    /// How stale a copy may be shown: the response's `stale-if-error=N`, else the manager's default
    /// maximum, both overridable per request. The entries expired two days before the failure
    /// (their `Expires`), and the bound is read back from the reopened `FileCache`.
    struct Bound: Sendable, CustomTestStringConvertible {
        let name: String
        let cacheControl: String
        var manager: StaleIfErrorPolicy = .fromServer(defaultMaximumStaleness: nil)
        var request: StaleIfErrorPolicy?
        let showsTheCopy: Bool
        var testDescription: String { name }
    }

    static let day = 86_400.0
    static let bounds: [Bound] = [
        Bound(name: "stale-if-error of 3 days", cacheControl: "stale-if-error=259200", showsTheCopy: true),
        Bound(name: "stale-if-error of 1 day", cacheControl: "stale-if-error=86400", showsTheCopy: false),
        Bound(name: "no stale-if-error, no bound", cacheControl: "public", showsTheCopy: true),
        Bound(
            name: "no stale-if-error, the manager's 1 day", cacheControl: "public",
            manager: .fromServer(defaultMaximumStaleness: day), showsTheCopy: false),
        Bound(
            name: "no stale-if-error, the manager's 3 days", cacheControl: "public",
            manager: .fromServer(defaultMaximumStaleness: 3 * day), showsTheCopy: true),
        Bound(
            name: "stale-if-error of 3 days over the manager's 1 day", cacheControl: "stale-if-error=259200",
            manager: .fromServer(defaultMaximumStaleness: day), showsTheCopy: true),
        Bound(
            name: "the request lifts the manager's bound", cacheControl: "public",
            manager: .fromServer(defaultMaximumStaleness: day), request: .fromServer(defaultMaximumStaleness: nil),
            showsTheCopy: true),
        Bound(name: "the manager turns it off", cacheControl: "stale-if-error=259200", manager: .never, showsTheCopy: false),
        Bound(name: "the request turns it off", cacheControl: "public", request: .never, showsTheCopy: false),
    ]

    @Test(arguments: bounds)
    func staleIfErrorAndThePolicyBoundHowStaleACopyIsShown(_ bound: Bound) async throws {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        try await Self.previousRun(server, directory: directory, cacheControl: bound.cacheControl, expires: Self.httpDate(-2 * Self.day))
        try Self.breakNetwork(.refused, server)
        let manager = try Self.newRun(directory) { configuration in
            configuration.policy.staleIfError = bound.manager
            configuration.policy.retry = .none  // a refused connection that is delivered is retried first
        }
        let request = ObjectRequest(url: server.url(Self.path), policy: PolicyOverrides(staleIfError: bound.request))
        let user = RecordingUser(request, decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { !user.objects.isEmpty || !user.errors.isEmpty })
        if bound.showsTheCopy {
            #expect(user.objects.map(\.text) == ["version 1"])
            #expect(user.errors.isEmpty)
        } else {
            #expect(user.objects.isEmpty)
            #expect(user.errors.count == 1)
        }
    }

    /// Without a file cache, the stale object is the one in memory: the fetch ends at the first
    /// failed attempt, without waiting for the retries, and the user keeps that object.
    @Test func aStaleObjectInMemoryIsKeptAtTheFirstFailureToo() async throws {
        let server = try LoopbackServer()
        server.setRoute(Self.path, .ok(Data("version 1".utf8)).caching(etag: "\"v1\"", cacheControl: "max-age=0"))
        let manager = makeNetworkManager { configuration in
            configuration.policy.retry = RetryPolicy(maximumRetries: 3, initialDelay: 600)
        }
        let url = server.url(Self.path)
        let first = try await manager.object(for: ObjectRequest(url: url), decoder: BlobDecoder())
        #expect(first.text == "version 1")
        try Self.breakNetwork(.reset, server)
        let user = RecordingUser(ObjectRequest(url: url), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { !user.objects.isEmpty || !user.errors.isEmpty })
        #expect(user.objects.count == 1)
        #expect(user.objects.first === first)
        #expect(user.errors.isEmpty)
        // The object came from memory, and the user is told it is stale and why.
        #expect(user.origins == [.memory])
        #expect(user.freshnesses.count == 1 && user.freshnesses.first?.isStale == true)
        if case .stale(nil)? = user.freshnesses.first { Issue.record("the failure is not told") }
        #expect(server.recordedRequests(for: Self.path).last?.header("If-None-Match") == "\"v1\"")
        #expect(manager.statistics.decodes == 1, "the object in memory is shown, not decoded again")
    }

    /// The object in memory is held to the same rule as a file entry: an HTTP status other than
    /// 500, 502, 503 and 504 is the server's answer, delivered, never hidden behind the stale object.
    @Test(arguments: [(404, false), (429, false), (501, false), (503, true)])
    func aStaleObjectInMemoryHidesNoStatusButTheGatewayErrors(status: Int, showsTheObject: Bool) async throws {
        let server = try LoopbackServer()
        server.setRoute(Self.path, .ok(Data("version 1".utf8)).caching(etag: "\"v1\"", cacheControl: "max-age=0"))
        let manager = makeNetworkManager { $0.policy.retry = .none }
        let url = server.url(Self.path)
        let first = try await manager.object(for: ObjectRequest(url: url), decoder: BlobDecoder())
        server.setRoute(Self.path, .status(status))
        let user = RecordingUser(ObjectRequest(url: url), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { !user.objects.isEmpty || !user.errors.isEmpty })
        if showsTheObject {
            #expect(user.objects.count == 1 && user.objects.first === first)
            #expect(user.freshnesses == [.stale(revalidationError: .httpStatus(code: status))])
        } else {
            #expect(user.objects.isEmpty)
            #expect(user.errors == [.httpStatus(code: status)])
        }
    }

    /// With a file cache as well, the stale entry the fetch falls back to holds the bytes of the
    /// object already in memory: that object is shown (from memory, told stale), not decoded again.
    @Test func aStaleObjectInMemoryIsShownRatherThanItsFileEntryDecodedAgain() async throws {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        server.setRoute(Self.path, .ok(Data("version 1".utf8)).caching(etag: "\"v1\"", cacheControl: "max-age=0"))
        let manager = try Self.newRun(directory) { $0.policy.retry = .none }
        let url = server.url(Self.path)
        let first = try await manager.object(for: ObjectRequest(url: url), decoder: BlobDecoder())
        #expect(manager.statistics.decodes == 1)
        try Self.breakNetwork(.refused, server)
        let user = RecordingUser(ObjectRequest(url: url), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { !user.objects.isEmpty || !user.errors.isEmpty })
        #expect(user.objects.count == 1 && user.objects.first === first)
        #expect(user.origins == [.memory])
        #expect(user.freshnesses.first?.isStale == true)
        #expect(user.errors.isEmpty)
        #expect(manager.statistics.decodes == 1)
    }

    /// An app launched offline-ish under stale-while-revalidate (the server answers, but only
    /// when the test lets it): the expired entry is shown as soon as it is read, told stale,
    /// while its revalidation waits at the server; the new version follows, current.
    @Test func aColdStartUnderStaleWhileRevalidateShowsTheEntryAtOnceThenTheNewVersion() async throws {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        try await Self.previousRun(server, directory: directory)
        let gate = GatedRoute(
            server, path: Self.path, response: .ok(Data("version 2".utf8)).caching(etag: "\"v2\"", cacheControl: "max-age=600"))
        defer { gate.open() }
        let manager = try Self.newRun(directory) { $0.policy.staleWhileRevalidate = true }
        let user = RecordingUser(ObjectRequest(url: server.url(Self.path)), decoder: BlobDecoder())
        manager.manage(user)
        // Shown while the server holds the revalidation: no answer came.
        #expect(await waitUntil { !user.objects.isEmpty })
        #expect(user.objects.map(\.text) == ["version 1"])
        #expect(user.origins == [.fileCache])
        #expect(user.freshnesses == [.stale(revalidationError: nil)])
        #expect(await waitUntil { gate.arrivals == 1 })
        gate.open()
        #expect(await waitUntil { user.objects.count == 2 || !user.errors.isEmpty })
        #expect(server.recordedRequests(for: Self.path).last?.header("If-None-Match") == "\"v1\"")
        #expect(user.objects.map(\.text) == ["version 1", "version 2"])
        #expect(user.origins == [.fileCache, .network])
        #expect(user.freshnesses == [.stale(revalidationError: nil), .current])
        #expect(user.errors.isEmpty)
    }

    /// The fetch that fell back says its bytes are stale, and why; a fresh download does not.
    @Test func theFetchThatFellBackIsMarkedStale() async throws {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        server.setRoute(Self.path, .ok(Data("version 1".utf8)).caching(etag: "\"v1\"", cacheControl: "max-age=0"))
        let request = ObjectRequest(url: server.url(Self.path))
        var policy = LoadPolicy()
        policy.retry = .none
        policy.timeout = 300
        let loader = URLSessionDataLoader()
        func fetch() async -> Result<FetchedData, ManagedCacheError> {
            await FetchOperation(
                dataKey: request.dataKey, request: request, policy: policy, loader: loader, fileCache: fileCache,
                undecoded: MemoryCache(), inMemoryThreshold: 1 << 20, priority: LoadPriorityCell(.normal),
                callbacks: .eventsOnly { _ in }
            ).run()
        }
        let downloaded = try await fetch().get()
        #expect(downloaded.origin == .network)
        #expect(!downloaded.isStale)
        try server.refuseConnections()
        let fellBack = try await fetch().get()
        #expect(fellBack.origin == .fileCache)
        #expect(fellBack.isStale)
        #expect(fellBack.memory == Data("version 1".utf8))
        if case .transport? = fellBack.staleAfterFailure {
        } else {
            Issue.record("the failure kept: \(String(describing: fellBack.staleAfterFailure))")
        }
    }
}
