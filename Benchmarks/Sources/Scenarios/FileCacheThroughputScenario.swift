import Foundation
import LoopbackServer
import ManagedCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network scenario with a file cache writing every object: 2,000 distinct 16 KiB objects
/// from the loopback server through a manager with a new, empty `FileCache` (or `BigFileCache`)
/// on the disk, against raw `URLSession` fetching the same URLs with the same concurrency (and
/// writing nothing).
struct FileCacheThroughputScenario: BenchmarkScenario {
    let identifier = "network-file-cache"
    let usesNetwork = true

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let objects = context.pick(full: 2_000, quick: 600)
        let objectSize = NetworkThroughputScenario.objectSize
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = Data((0..<objectSize).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        server.setFallback { request in request.path.hasPrefix("/objects/") ? .ok(body) : nil }
        let fetcher = ConcurrentFetcher(concurrency: NetworkThroughputScenario.concurrency)

        var round = 0
        var failure: String?
        var fileSystem = "unknown"
        func urls(_ side: String) -> [URL] {
            round += 1
            return (0..<objects).map { server.url("/objects/\(side)/\(round)/\($0).bin") }
        }
        func measure(_ side: String, _ body: () throws -> Double) -> Double {
            do { return try body() } catch {
                failure = "\(side): \(error)"
                return 0
            }
        }
        func throughput(_ side: String, inMemory: Bool = false, makeCache: (URL) throws -> any FileCaching) throws -> Double {
            let directory = try ScratchDirectory(prefix: side, inMemory: inMemory)
            if !inMemory { fileSystem = directory.fileSystem }
            let cache = try makeCache(directory.appending("cache"))
            var configuration = ObjectManager.Configuration()
            configuration.fileCache = cache
            let manager = ObjectManager(configuration: configuration)
            let decoder = PayloadDecoder()
            let rate = try fetcher.objectsPerSecond(urls(side), expectedSize: objectSize) { url in
                try await manager.object(for: ObjectRequest(url: url), decoder: decoder).bytes.count
            }
            let stored = cache.statistics.count
            guard stored == objects else { throw BenchmarkFailure("\(stored) of \(objects) objects in the file cache") }
            return rate
        }
        let samples = context.measurement(full: 5, quick: 2).run([
            { measure("FileCache") { try throughput("FileCache") { try FileCache(directory: $0) } } },
            { measure("BigFileCache") { try throughput("BigFileCache") { try BigFileCache(directory: $0) } } },
            { measure("URLSession") { try NetworkThroughputScenario.sessionThroughput(urls("session"), fetcher) } },
            { measure("URLSession+write") { try sessionAndWrite(urls("session-write"), fetcher) } },
            { measure("FileCache in memory") { try throughput("FileCache-tmpfs", inMemory: true) { try FileCache(directory: $0) } } },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let perSecond = { (value: Double) in Format.number(value) + "/s" }
        let note =
            "objects per second, \(NetworkThroughputScenario.concurrency) in flight on every side; a new, empty "
            + "cache (\(fileSystem)) and manager per repetition; every object committed to the cache (checked); "
            + "median (min–max) of \(samples[0].count)"
        return [
            .comparing(
                "\(Format.grouped(objects)) distinct 16 KB objects with `FileCache` writing every object",
                ours: samples[0], baseline: samples[2], baselineName: "raw `URLSession`", write: perSecond,
                direction: .atLeast, limit: 0.8, target: "≥ 0.8×", notes: [note]),
            .comparing(
                "\(Format.grouped(objects)) distinct 16 KB objects with `BigFileCache` writing every object",
                ours: samples[1], baseline: samples[2], baselineName: "raw `URLSession`", write: perSecond,
                direction: .atLeast, limit: 0.8, target: "≥ 0.8×"),
            diagnostic(
                "(diagnostic) raw `URLSession` plus `Data.write(to:)` of every object to its own file, same disk",
                samples[3], samples[2], perSecond,
                "what writing 2,000 files costs on this disk without any cache logic: the floor for the rows above"),
            diagnostic(
                "(diagnostic) the `FileCache` row with the cache in memory (tmpfs)", samples[4], samples[2], perSecond,
                "the same code without the disk's latency"),
        ]
    }

    private func diagnostic(
        _ title: String, _ ours: Samples, _ baseline: Samples, _ write: (Double) -> String,
        _ note: String
    ) -> ResultRow {
        ResultRow(
            scenario: title, ours: Format.median(ours, write), baseline: "raw `URLSession`: \(Format.median(baseline, write))",
            ratio: Format.ratio(ours.pairedRatio(to: baseline)), target: "—", met: nil, notes: [note])
    }

    /// Objects per second through raw `URLSession`, each body then written to its own file with `Data.write(to:)`.
    private func sessionAndWrite(_ urls: [URL], _ fetcher: ConcurrentFetcher) throws -> Double {
        let directory = try ScratchDirectory(prefix: "session-write")
        let session = BaselineSession.make(maximumConnectionsPerHost: NetworkThroughputScenario.concurrency)
        defer { session.finishTasksAndInvalidate() }
        let folder = directory.url
        return try fetcher.objectsPerSecond(urls, expectedSize: NetworkThroughputScenario.objectSize) { url in
            let (data, _) = try await session.data(from: url)
            try data.write(to: folder.appendingPathComponent(url.pathComponents.suffix(2).joined(separator: "-")))
            return data.count
        }
    }
}
