import Foundation
import LoopbackServer
import ManagedCache

/// Revalidation: re-requesting 1,000 stale but unchanged objects. Every object is served with an
/// ETag and `Cache-Control: max-age=0`, so a second request must revalidate; a `304` must refresh
/// it without its body. Bytes on the network are everything the server wrote (status lines,
/// headers and bodies), against the objects' own bytes.
struct RevalidationScenario: BenchmarkScenario {
    let identifier = "revalidation"
    let usesNetwork = true

    static let objectCount = 1_000
    static let objectSize = 16_384

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = Data((0..<Self.objectSize).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        server.setFallback { request in
            guard request.path.hasPrefix("/revalidate/") else { return nil }
            return LoopbackResponse.ok(body).caching(etag: "\"\(request.path.dropFirst(12))\"", cacheControl: "max-age=0")
        }
        let urls = (0..<Self.objectCount).map { server.url("/revalidate/\($0)") }
        let fetcher = ConcurrentFetcher(concurrency: 6)
        var ratios = Samples()
        var notes: [String] = []
        for repetition in 0..<context.pick(full: 3, quick: 1) {
            let directory = try ScratchDirectory(prefix: "revalidation")
            var configuration = ObjectManager.Configuration()
            configuration.fileCache = try FileCache(directory: directory.url)
            configuration.policy.retry = .none
            let manager = ObjectManager(configuration: configuration)
            let fetch: @Sendable (URL) async throws -> Int = { url in
                try await manager.object(for: ObjectRequest(url: url), decoder: DataDecoder()).count
            }
            _ = try fetcher.objectsPerSecond(urls, expectedSize: Self.objectSize, fetch: fetch)
            manager.removeAllObjects()  // the second round is answered from the file cache's stale entries
            server.resetStatistics()
            _ = try fetcher.objectsPerSecond(urls, expectedSize: Self.objectSize, fetch: fetch)
            let wire = server.bodyBytesSent + server.headBytesSent
            let objects = Self.objectCount * Self.objectSize
            ratios.append(Double(wire) / Double(objects))
            let statistics = manager.statistics
            // Stale entries served without asking the server would cost 0 bytes too: not a pass.
            if server.totalRequestCount != Self.objectCount || statistics.notModified != Self.objectCount {
                throw BenchmarkFailure(
                    "second round: \(server.totalRequestCount) requests and \(statistics.notModified) "
                        + "answered 304 for \(Self.objectCount) stale objects; every one must be revalidated")
            }
            if repetition == 0 {
                notes.append(
                    "second round: \(server.totalRequestCount) conditional requests, "
                        + "\(statistics.notModified) answered 304, \(server.bodyBytesSent) body bytes and "
                        + "\(server.headBytesSent) header bytes on the wire for \(Format.grouped(objects)) bytes of objects; "
                        + "decodes of the second round are from the file cache's bytes (memory was emptied)")
            }
        }
        let median = ratios.median
        return [
            ResultRow(
                scenario: "re-requesting 1,000 stale but unchanged objects (16 KiB, ETag, max-age=0)",
                ours: "\(Format.ratio(median)) of their bytes on the network",
                baseline: "the objects' bytes", ratio: Format.ratio(median),
                target: "≤ 0.05×", met: median <= 0.05,
                notes: notes)
        ]
    }
}
