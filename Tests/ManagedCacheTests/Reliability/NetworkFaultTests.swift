import Foundation
import LoopbackServer
import ManagedCache
import TestSupport
import Testing

/// Every way a server or the network can fail a download, through the real
/// `URLSession` loader against the loopback server, with a `FileCache` attached. For each fault:
/// the right typed error, every user told once, nothing in the memory cache or on disk, no hang,
/// an `await` caller told the same (or, for a permanent failure, told it failed recently without
/// a new request), and the next good request for the key succeeds.
@Suite(.offCooperativePool) struct NetworkFaultTests {
    /// One fault and the outcome it must have.
    struct Fault: Sendable {
        let name: String
        let response: LoopbackResponse
        /// The manager's idle timeout for this case.
        var timeout: Double = 30
        var maximumBodySize: Int = 1 << 20
        /// `nil`: the right outcome is the object (a slow drip within the idle timeout).
        let expected: (@Sendable (ManagedCacheError) -> Bool)?
        let expectation: String
    }

    static let payloadSize = 40_000

    static func goodBody(_ name: String) -> Data {
        FramedBody.make(seed: name, count: payloadSize)
    }

    /// Bodies a careless client would take for images.
    static let imageLookingBodies: [(contentType: String, bytes: Data)] = [
        ("image/png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]) + Data("IHDR".utf8) + Data(count: 2_000)),
        ("image/jpeg", Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]) + Data("JFIF".utf8) + Data(count: 2_000) + Data([0xFF, 0xD9])),
        ("image/gif", Data("GIF89a".utf8) + Data(count: 2_000) + Data([0x3B])),
        ("image/webp", Data("RIFF".utf8) + Data([0xD0, 0x07, 0, 0]) + Data("WEBPVP8 ".utf8) + Data(count: 2_000)),
    ]

    static func status(_ code: Int, body index: Int) -> LoopbackResponse {
        let body = imageLookingBodies[index % imageLookingBodies.count]
        return LoopbackResponse(status: code, body: body.bytes, contentType: body.contentType)
    }

    static func isTransport(_ error: ManagedCacheError) -> Bool {
        if case .transport = error { return true }
        return false
    }

    static func isDecodingFailure(_ error: ManagedCacheError) -> Bool {
        if case .decodingFailed = error { return true }
        return false
    }

    static let faults: [Fault] = {
        let framed = FramedBody.contentType
        // 10 s, not less: the idle timeout counts from when the request is handed to the
        // session, and on a loaded 2-core machine a shorter one fired before the request reached
        // the server, so the checks that a request was sent failed (3 s was too short beside two
        // busy loops and a build).
        let idle = 10.0
        var faults: [Fault] = [
            Fault(
                name: "stall-after-100-body-bytes",
                response: .ok(goodBody("stall"), contentType: framed).behaving(.stall(afterBodyBytes: 100)),
                timeout: idle, expected: { $0 == .timedOut(seconds: idle) }, expectation: ".timedOut(\(idle))"),
            Fault(
                name: "stall-before-the-head",
                response: .ok(goodBody("late"), contentType: framed).behaving(.delayed(seconds: 3 * idle)),
                timeout: idle, expected: { $0 == .timedOut(seconds: idle) }, expectation: ".timedOut(\(idle))"),
            Fault(
                name: "truncated-with-content-length",
                response: .ok(goodBody("cut"), contentType: framed).behaving(.truncate(afterBodyBytes: 20_000, sendContentLength: true)),
                expected: isTransport, expectation: ".transport"),
            Fault(
                name: "truncated-without-content-length",
                response: .ok(goodBody("cut2"), contentType: framed).behaving(.truncate(afterBodyBytes: 20_000, sendContentLength: false)),
                expected: isDecodingFailure, expectation: ".decodingFailed (the validating decoder sees the cut)"),
            Fault(
                name: "reset-mid-body",
                response: .ok(goodBody("reset"), contentType: framed).behaving(.reset(afterBodyBytes: 20_000)),
                expected: isTransport, expectation: ".transport"),
            Fault(
                name: "drip-slower-than-the-timeout",
                response: .ok(goodBody("drip"), contentType: framed).behaving(.drip(chunkSize: 1_000, interval: 3 * idle)),
                timeout: idle, expected: { $0 == .timedOut(seconds: idle) }, expectation: ".timedOut(\(idle))"),
            // Each chunk comes 20 times faster than the idle timeout, the whole body takes twice
            // as long as it (20 s): an idle timeout, not a total one, so this load succeeds. (The
            // margin is wide because on a loaded 2-core machine every transfer of the process was
            // seen silent for more than 2.5 s, and under AddressSanitizer a 2 s silence between
            // 50 ms chunks.)
            Fault(
                name: "drip-within-the-timeout",
                response: .ok(goodBody("slow"), contentType: framed).behaving(.drip(chunkSize: 1_000, interval: 0.5)),
                timeout: 10, expected: nil, expectation: "the object"),
            Fault(
                name: "redirect-loop", response: .redirect(to: "/fault/redirect-loop"),
                expected: { $0 == .transport(code: -1007, description: $0.transportDescription) }, expectation: ".transport(-1007)"),
            Fault(
                name: "over-the-size-limit-announced", response: .ok(goodBody("big"), contentType: framed),
                maximumBodySize: 10_000, expected: { $0 == .tooLarge(limit: 10_000) }, expectation: ".tooLarge(10000)"),
            Fault(
                name: "over-the-size-limit-unannounced",
                response: .ok(goodBody("big2"), contentType: framed)
                    .behaving(.truncate(afterBodyBytes: payloadSize + 20, sendContentLength: false)),
                maximumBodySize: 10_000, expected: { $0 == .tooLarge(limit: 10_000) }, expectation: ".tooLarge(10000)"),
            Fault(
                name: "wrong-content-type", response: .ok(goodBody("html"), contentType: "text/html; charset=utf-8"),
                expected: isDecodingFailure, expectation: ".decodingFailed"),
            Fault(
                name: "captive-portal-page",
                response: .ok(Data("<html><body>Please log in to the Wi-Fi</body></html>".utf8), contentType: "text/html"),
                expected: isDecodingFailure, expectation: ".decodingFailed"),
            Fault(
                name: "empty-body", response: .ok(Data(), contentType: framed),
                expected: isDecodingFailure, expectation: ".decodingFailed"),
            Fault(
                name: "empty-body-without-content-length",
                response: .ok(Data(), contentType: framed).behaving(.truncate(afterBodyBytes: 0, sendContentLength: false)),
                expected: isDecodingFailure, expectation: ".decodingFailed"),
            Fault(
                name: "204-no-content", response: .status(204),
                expected: isDecodingFailure, expectation: ".decodingFailed (a 2xx without a body)"),
        ]
        for (index, code) in [400, 403, 404, 410, 429, 500, 502, 503].enumerated() {
            faults.append(
                Fault(
                    name: "\(code)-with-an-image-looking-body", response: status(code, body: index),
                    expected: { $0 == .httpStatus(code: code) }, expectation: ".httpStatus(\(code))"))
        }
        return faults
    }()

    @Test func everyNetworkFaultFailsTypedCachesNothingAndTheNextGoodRequestSucceeds() async throws {
        let tally = ReliabilityTally(item: "network faults")
        await withTaskGroup(of: Void.self) { group in
            for fault in Self.faults {
                group.addTask { await Self.run(fault, tally: tally) }
            }
        }
        tally.report()
        #expect(tally.caseCount == Self.faults.count)
        #expect(tally.failureCount == 0)
    }

    private static func run(_ fault: Fault, tally: ReliabilityTally) async {
        let name = fault.name
        tally.addCase(name)
        let server: LoopbackServer
        let fileCache: FileCache
        let directory = TemporaryDirectory(prefix: "reliability-network")
        do {
            server = try LoopbackServer()
            fileCache = try FileCache(directory: directory.url)
        } catch {
            tally.check(false, name, "setup failed: \(error)")
            return
        }
        defer { server.stop() }
        let events = EventLog()
        let manager = makeNetworkManager(fileCache: fileCache) { configuration in
            configuration.policy.timeout = fault.timeout
            configuration.policy.maximumBodySize = fault.maximumBodySize
            configuration.eventHandler = events.handler
        }
        let path = "/fault/\(name)"
        // Held until the three users below are managed: a fault answered at once could otherwise
        // end the first user's load before the others join it (they are then rightly told that
        // the key failed recently, and the test would measure the machine's speed).
        let gate = GatedRoute(server, path: path, response: fault.response)
        let request = ObjectRequest(url: server.url(path))
        let decoder = FramedDecoder()

        // A: three users of the key share one load; each hears the outcome exactly once.
        let users = [
            RecordingUser(request, decoder: decoder),
            RecordingUser(request, decoder: decoder),
            RecordingUser(request, decoder: decoder, delivery: .mainQueue),
        ]
        for user in users { manager.manage(user) }
        gate.open()
        let told = await waitUntil { users.allSatisfy { $0.finalCallbackCount >= 1 } }
        guard tally.check(told, name, "not every user was told within \(waitBound) s (a hang)") else { return }
        tally.check(
            users.allSatisfy { $0.finalCallbackCount == 1 }, name,
            "final callbacks per user: \(users.map(\.finalCallbackCount))")
        tally.add(users.count, to: "users told")

        guard let expected = fault.expected else {
            await checkSuccess(fault, users: users, manager: manager, fileCache: fileCache, server: server, tally: tally)
            return
        }
        let errors = users.compactMap(\.errors.first)
        tally.check(
            errors.count == users.count && errors.allSatisfy(expected), name,
            "expected \(fault.expectation), users got \(users.map(\.errors))")
        guard let error = errors.first else { return }
        if name != "redirect-loop" {
            tally.check(server.requestCount(for: path) == 1, name, "\(server.requestCount(for: path)) requests for one shared load")
        }

        // B: an `await` caller: a permanent failure is remembered (no new request), a transient one is retried and fails alike.
        let requestsBefore = server.requestCount(for: path)
        let awaited: Result<Blob, ManagedCacheError>
        do throws(ManagedCacheError) {
            awaited = .success(try await manager.object(for: request, decoder: decoder))
        } catch {
            awaited = .failure(error)
        }
        if error.isPermanent {
            tally.check(awaited.error == .recentlyFailed(error), name, "await after a permanent failure gave \(awaited)")
            tally.check(server.requestCount(for: path) == requestsBefore, name, "a remembered failure was requested again")
        } else {
            tally.check(awaited.error.map(expected) == true, name, "await gave \(awaited), expected \(fault.expectation)")
            tally.check(server.requestCount(for: path) > requestsBefore, name, "a transient failure was not retried by a new request")
        }

        // C: nothing was kept anywhere, and nothing is left half-written.
        let loadingEmpty = await waitUntil { manager.activeLoadCount == 0 && regularFiles(in: directory.url, under: "loading").isEmpty }
        tally.check(loadingEmpty, name, "a load or a partial file remained: \(regularFiles(in: directory.url, under: "loading"))")
        tally.check(manager.memoryCache.count == 0, name, "\(manager.memoryCache.count) objects in the memory cache")
        tally.check(
            fileCache.statistics.count == 0 && fileCache.entry(forKey: request.dataKey) == nil, name,
            "\(fileCache.statistics.count) entries in the file cache")
        tally.check(regularFiles(in: directory.url, under: "ready").isEmpty, name, "files in ready/")
        tally.check(events.loadFailures.contains(error), name, "the event handler did not hear of the failure")

        // D: the server recovers; after forgetting the failure, the next request for the key succeeds and is cached.
        let good = FramedBody.make(seed: "good-\(name)", count: 5_000)  // within every case's size limit
        server.setRoute(path, .ok(good, contentType: FramedBody.contentType))
        manager.forgetFailure(for: request)
        // The same key, with a timeout that only a hang could reach (the faults' 1 s timeouts are
        // for the faults, not for a good response on a loaded machine).
        let goodRequest = ObjectRequest(url: request.url, policy: PolicyOverrides(timeout: 60))
        let next = RecordingUser(goodRequest, decoder: decoder)
        manager.manage(next)
        let recovered = await waitUntil { next.finalCallbackCount >= 1 }
        tally.check(recovered, name, "the good request after the fault did not finish (a hang)")
        tally.check(
            next.objects.first?.bytes == FramedBody.payload(seed: "good-\(name)", count: 5_000), name,
            "the good request after the fault gave \(next.errors)")
        tally.check(next.origins == [.network], name, "origin \(next.origins)")
        tally.check(
            fileCache.entry(forKey: request.dataKey).flatMap { try? fileCache.readData(for: $0) } == good, name,
            "the good body is not in the file cache")
        tally.check(manager.memoryCache.count == 1, name, "the good object is not in the memory cache")
    }

    /// The one case whose right outcome is the object: every user has it, once, and it is cached.
    private static func checkSuccess(
        _ fault: Fault, users: [RecordingUser<FramedDecoder>], manager: ObjectManager, fileCache: FileCache,
        server: LoopbackServer, tally: ReliabilityTally
    ) async {
        let name = fault.name
        let payload = FramedBody.payload(seed: "slow", count: payloadSize)
        tally.check(
            users.allSatisfy { $0.objects.first?.bytes == payload && $0.errors.isEmpty }, name,
            "expected the object, users got \(users.map(\.errors))")
        tally.check(users.allSatisfy { $0.objects.first === users[0].objects.first }, name, "users got different instances")
        tally.check(manager.memoryCache.count == 1 && fileCache.statistics.count == 1, name, "the object was not cached")
        tally.check(users[0].progress.count > 5, name, "a drip of many chunks reported \(users[0].progress.count) progress events")
    }
}

extension Result {
    /// The failure, if any.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension ManagedCacheError {
    /// The description of a transport error (so a test can match on the code alone).
    var transportDescription: String {
        if case .transport(_, let description) = self { return description }
        return ""
    }
}

/// Regular files under `root/subdirectory`, recursively (names relative to it).
func regularFiles(in root: URL, under subdirectory: String) -> [String] {
    regularFiles(under: root.appendingPathComponent(subdirectory))
}
