import Foundation
import LoopbackServer
import ManagedCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// 2,000 distinct 16 KiB objects from the loopback server, no file cache: the manager (default
/// loader, 6 connections per host, `async` API, decoded to `Payload`s) against raw `URLSession`
/// `data(from:)` on a session configured the same way. Every side runs 6 workers fetching one
/// object at a time, so each keeps exactly 6 requests in flight.
///
/// A third side, the engine's `URLSessionDataLoader` driven directly, is informational: it splits
/// the gap between the manager and raw `URLSession` into what the loader costs and what the
/// manager adds on top. A fourth, `StreamingBaselineSession`, is the floor under any loader that
/// sees the bytes as they arrive.
struct NetworkThroughputScenario: BenchmarkScenario {
    let identifier = "network"
    let usesNetwork = true

    /// Size of every object.
    static let objectSize = 16_384
    /// Requests in flight, on every side: the loader's connections per host.
    static let concurrency = 6

    /// Objects fetched by each side in a round.
    static func objectCount(quick: Bool) -> Int { quick ? 600 : 2_000 }

    /// A loopback server answering every `/objects/…` path with the same `objectSize` bytes.
    static func startServer() throws -> LoopbackServer {
        let server = try LoopbackServer()
        let body = Data((0..<objectSize).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        server.setFallback { request in request.path.hasPrefix("/objects/") ? .ok(body) : nil }
        return server
    }

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let objects = Self.objectCount(quick: context.options.quick)
        let server = try Self.startServer()
        defer { server.stop() }
        let fetcher = ConcurrentFetcher(concurrency: Self.concurrency)

        var round = 0
        var failure: String?
        var cpu = [String: Samples]()
        /// Fresh URLs for every round, so nothing could be answered from a cache.
        func urls(_ side: String) -> [URL] {
            round += 1
            return (0..<objects).map { server.url("/objects/\(side)/\(round)/\($0).bin") }
        }
        func measure(_ side: String, _ body: () throws -> Double) -> Double {
            let start = CPUTime.now()
            defer { cpu[side, default: Samples()].append((CPUTime.now() - start) / Double(objects) * 1e6) }
            do { return try body() } catch {
                failure = "\(side): \(error)"
                return 0
            }
        }
        let samples = context.measurement(full: 5, quick: 2).run([
            { measure("manager") { try Self.managerThroughput(urls("manager"), fetcher) } },
            { measure("URLSession") { try Self.sessionThroughput(urls("session"), fetcher) } },
            { measure("loader") { try Self.loaderThroughput(urls("loader"), fetcher) } },
            { measure("streaming") { try Self.streamingThroughput(urls("streaming"), fetcher) } },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let perSecond = { (value: Double) in Format.number(value) + "/s" }
        let microseconds = { (samples: Samples?) in Format.number(samples?.median ?? 0) + " µs" }
        /// A row with no target: `side` against raw `URLSession` in the same run.
        func diagnostic(_ scenario: String, _ side: Samples, note: String) -> ResultRow {
            ResultRow(
                scenario: scenario, ours: Format.median(side, perSecond),
                baseline: "raw `URLSession`: \(Format.median(samples[1], perSecond))",
                ratio: Format.ratio(side.pairedRatio(to: samples[1])), target: "—", met: nil, notes: [note])
        }
        return [
            .comparing(
                "\(Format.grouped(objects)) distinct 16 KB objects from a loopback HTTP server, no file cache",
                ours: samples[0], baseline: samples[1], baselineName: "raw `URLSession`", write: perSecond,
                direction: .atLeast, limit: 0.95, target: "≥ 0.95×",
                notes: [
                    "objects per second, \(Self.concurrency) in flight on every side (the loader's 6 "
                        + "connections per host); a new manager / session per repetition; median (min–max) of "
                        + "\(samples[0].count); CPU time per object (whole process, loopback server included): manager "
                        + "\(microseconds(cpu["manager"])), raw `URLSession` \(microseconds(cpu["URLSession"])), loader alone "
                        + "\(microseconds(cpu["loader"]))"
                ]),
            diagnostic(
                "(diagnostic) the same through the engine's `URLSessionDataLoader` alone", samples[2],
                note: "the loader streams through delegate callbacks; the manager row adds handlers, "
                    + "the fetch task, the idle-timeout watchdog, decoding and delivery on top of it"),
            diagnostic(
                "(diagnostic) the floor of a streaming loader: raw `URLSession` with a data delegate", samples[3],
                note: "`StreamingBaselineSession`: the same session configuration, a data task per URL whose bytes "
                    + "arrive in `didReceive data` and are handed back at completion, nothing else; "
                    + "CPU time per object \(microseconds(cpu["streaming"]))"),
        ]
    }

    /// Runs the sides `--network-side` names (comma-separated), one warm-up round and then
    /// `rounds` measured ones, rotating which goes first, and prints each side's rates: a process
    /// a profiler can count with the other sides absent, or a closer look at two of them.
    /// Returns the exit status.
    static func runSides(_ list: String, quick: Bool, rounds: Int) -> Int32 {
        let known: [String: ([URL], ConcurrentFetcher) throws -> Double] = [
            "manager": managerThroughput, "session": sessionThroughput, "loader": loaderThroughput,
            "streaming": streamingThroughput,
        ]
        let names = list.split(separator: ",").map(String.init)
        guard !names.isEmpty, names.allSatisfy({ known[$0] != nil }) else {
            print("unknown side in '\(list)'; sides: \(known.keys.sorted().joined(separator: ", "))")
            return 1
        }
        do {
            let server = try startServer()
            defer { server.stop() }
            let objects = objectCount(quick: quick)
            let fetcher = ConcurrentFetcher(concurrency: concurrency)
            var rates = [String: [Double]]()
            for round in 0...rounds {
                for offset in names.indices {
                    let name = names[(round + offset) % names.count]
                    let urls = (0..<objects).map { server.url("/objects/\(name)/\(round)/\($0).bin") }
                    let rate = try known[name]!(urls, fetcher)
                    if round > 0 { rates[name, default: []].append(rate) }  // round 0 warms up
                }
            }
            for name in names {
                let sorted = rates[name, default: []].sorted()
                let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
                print(
                    "\(name): median \(Format.number(median))/s of \(sorted.count), \(objects) objects each: "
                        + rates[name, default: []].map { Format.number($0) }.joined(separator: " "))
            }
            return 0
        } catch {
            print("\(list): \(error)")
            return 1
        }
    }

    /// Objects per second through a new manager with the default loader and no file cache.
    static func managerThroughput(_ urls: [URL], _ fetcher: ConcurrentFetcher) throws -> Double {
        let manager = ObjectManager()
        let decoder = PayloadDecoder()
        let rate = try fetcher.objectsPerSecond(urls, expectedSize: objectSize) { url in
            try await manager.object(for: ObjectRequest(url: url), decoder: decoder).bytes.count
        }
        guard decoder.counter.count == urls.count else {
            throw BenchmarkFailure("\(decoder.counter.count) decodes for \(urls.count) objects")
        }
        return rate
    }

    /// Objects per second through a new raw `URLSession`.
    static func sessionThroughput(_ urls: [URL], _ fetcher: ConcurrentFetcher) throws -> Double {
        let session = BaselineSession.make(maximumConnectionsPerHost: concurrency)
        defer { session.finishTasksAndInvalidate() }
        return try fetcher.objectsPerSecond(urls, expectedSize: objectSize) { url in
            let (data, response) = try await session.data(from: url)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchmarkFailure("status") }
            return data.count
        }
    }

    /// Objects per second through a new `StreamingBaselineSession`.
    static func streamingThroughput(_ urls: [URL], _ fetcher: ConcurrentFetcher) throws -> Double {
        let client = StreamingBaselineSession.make(maximumConnectionsPerHost: concurrency)
        defer { client.invalidate() }
        return try fetcher.objectsPerSecond(urls, expectedSize: objectSize) { url in
            try await client.byteCount(of: url)
        }
    }

    /// Objects per second through a new `URLSessionDataLoader`, without a manager.
    static func loaderThroughput(_ urls: [URL], _ fetcher: ConcurrentFetcher) throws -> Double {
        let loader = URLSessionDataLoader(maximumConnectionsPerHost: concurrency)
        return try fetcher.objectsPerSecond(urls, expectedSize: objectSize) { url in
            let receiver = CountingReceiver()
            _ = try await loader.load(DataLoadRequest(url: url), receiver: receiver)
            return receiver.byteCount
        }
    }
}
