import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import ManagedCache

/// A prefetch of a key that failed moments ago is answered from the failure memory, as a
/// `manage` of it is: `recentlyFailed`, without a request, in every form (bytes only, bytes into
/// a file cache, with a decoder). Against the loopback server, counting its requests.
@Suite(.offCooperativePool) struct PrefetchFailureMemoryTests {
    /// How the prefetch is made.
    enum Form: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// Bytes only, no file cache: kept undecoded in memory.
        case bytes
        /// Bytes only, into a `FileCache`.
        case bytesIntoFileCache
        /// Decoded into the memory cache.
        case decoded

        var testDescription: String { rawValue }

        func manager(_ directory: TemporaryDirectory) throws -> ObjectManager {
            makeNetworkManager(fileCache: self == .bytesIntoFileCache ? try FileCache(directory: directory.url) : nil)
        }

        func prefetchAndWait(_ requests: [ObjectRequest], with manager: ObjectManager) async -> PrefetchReport {
            switch self {
            case .bytes, .bytesIntoFileCache: return await manager.prefetchAndWait(requests)
            case .decoded: return await manager.prefetchAndWait(requests, decoder: BlobDecoder())
            }
        }
    }

    /// A loopback server whose `path` answers 404, and a manager of `form` loading from it.
    struct MissingKey {
        let server: LoopbackServer
        let directory = TemporaryDirectory()
        let manager: ObjectManager
        let request: ObjectRequest

        init(_ form: Form, path: String) throws {
            server = try LoopbackServer()
            server.setRoute(path, .status(404))
            manager = try form.manager(directory)
            request = ObjectRequest(url: server.url(path))
        }
    }

    @Test(arguments: Form.allCases)
    func threePrefetchesOfAKeyAnswering404SendOneRequest(form: Form) async throws {
        let fixture = try MissingKey(form, path: "/gone")
        defer { withExtendedLifetime(fixture) {} }  // its directory holds the file cache's
        let (server, manager, request) = (fixture.server, fixture.manager, fixture.request)

        var reports: [PrefetchReport] = []
        for attempt in 0..<3 {
            // Spaced as an app's repeated prefetches would be; the failure memory holds far longer.
            if attempt > 0 { try await Task.sleep(nanoseconds: 20_000_000) }
            reports.append(await form.prefetchAndWait([request], with: manager))
        }

        #expect(server.requestCount(for: "/gone") == 1)
        #expect(reports[0].results.map(\.outcome) == [.failed(.httpStatus(code: 404))])
        for report in reports.dropFirst() {
            #expect(report.results.map(\.outcome) == [.failed(.recentlyFailed(.httpStatus(code: 404)))])
            #expect(report.counts.failed == 1 && !report.isComplete)
        }
        // Counted as a `manage` answered from the failure memory is.
        #expect(manager.statistics.failures[.recentlyFailed] == 2)
        // An `await` of the key afterwards is answered the same way, without a request either.
        do {
            _ = try await manager.data(from: request.url)
            Issue.record("expected recentlyFailed")
        } catch {
            #expect(error == .recentlyFailed(.httpStatus(code: 404)))
        }
        #expect(server.requestCount(for: "/gone") == 1)
    }

    @Test(arguments: Form.allCases)
    func aForgottenFailureIsRequestedAgain(form: Form) async throws {
        let fixture = try MissingKey(form, path: "/flaky")
        defer { withExtendedLifetime(fixture) {} }  // its directory holds the file cache's
        let (server, manager, request) = (fixture.server, fixture.manager, fixture.request)
        _ = await form.prefetchAndWait([request], with: manager)

        server.setRoute("/flaky", .ok(Data("back".utf8)))
        manager.forgetFailure(for: request)
        let retried = await form.prefetchAndWait([request], with: manager)

        #expect(retried.results.map(\.outcome) == [.loaded(.network)])
        #expect(server.requestCount(for: "/flaky") == 2)
    }

    @Test func aTwentyURLPrefetchRunTwiceRequestsEach404Once() async throws {
        let server = try LoopbackServer()
        let paths = (0..<20).map { "/item/\($0)" }
        for (index, path) in paths.enumerated() {
            server.setRoute(path, index.isMultiple(of: 4) ? .status(404) : .ok(Data("item \(index)".utf8)))
        }
        let directory = TemporaryDirectory()
        let manager = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        let requests = paths.map { ObjectRequest(url: server.url($0)) }

        let first = await manager.prefetchAndWait(requests)
        let second = await manager.prefetchAndWait(requests)

        #expect(first.counts.loaded == 15 && first.counts.failed == 5)
        #expect(second.counts.alreadyCached == 15 && second.counts.failed == 5)
        for (index, result) in second.results.enumerated() where index.isMultiple(of: 4) {
            #expect(result.outcome == .failed(.recentlyFailed(.httpStatus(code: 404))))
        }
        #expect(server.totalRequestCount == 20)
    }
}
