import Foundation
import LoopbackServer
import ManagedCache

/// The reason this package exists: a table of 10,000 rows with 8 on screen is scrolled faster
/// than the network answers, then stops. Eight reusable cells (`ObjectUser`s re-managed as they
/// scroll, loading buffer 12) against the `UIImageView+Cached` design, which starts a download
/// for every row it shows and never cancels. Same server, same shaping: 50 ms before each
/// response, 256,000 bytes/s per connection, 16 KiB per row, 6 connections per host.
///
/// "Faster than the network answers" is taken literally for the buffer: at 300 rows/s a load is
/// pushed out of the 12-slot buffer 40 ms after it starts, before the server's 50 ms latency has
/// passed. A second, slower scroll (120 rows/s: loads live 100 ms, long enough to be answered
/// and mostly sent) shows how the byte figure depends on that.
struct ScrollScenario: BenchmarkScenario {
    let identifier = "scroll"
    let usesNetwork = true

    /// Rows in the table.
    static let rowCount = 10_000
    /// Rows on screen.
    static let visibleRows = 8
    /// Bytes per row's object.
    static let objectSize = 16_384
    /// Seconds the server waits before each response.
    static let latency = 0.05
    /// Body bytes per second per connection.
    static let bytesPerSecond = 256_000

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let duration = context.pick(full: 1.5, quick: 1.0)
        let repetitions = context.pick(full: 3, quick: 1)
        let fast = try measure(
            ScrollSimulation(
                rowCount: Self.rowCount, visibleRows: Self.visibleRows, rowsPerSecond: 300, duration: duration),
            repetitions: repetitions, label: "scroll")
        let slow = try measure(
            ScrollSimulation(
                rowCount: Self.rowCount, visibleRows: Self.visibleRows, rowsPerSecond: 120, duration: duration),
            repetitions: repetitions, label: "(slower scroll, answered within the buffer) scroll")
        return fast + slow
    }

    /// Runs `simulation` `repetitions` times with each loader, alternating which goes first.
    private func measure(_ simulation: ScrollSimulation, repetitions: Int, label: String) throws -> [ResultRow] {
        var ours: [ScrollOutcome] = []
        var naive: [ScrollOutcome] = []
        for repetition in 0..<repetitions {
            if repetition % 2 == 0 {
                naive.append(try runNaive(simulation))
                ours.append(try runManager(simulation))
            } else {
                ours.append(try runManager(simulation))
                naive.append(try runNaive(simulation))
            }
        }
        guard ours.allSatisfy(\.allShown) else { throw BenchmarkFailure("the manager did not show every row at rest") }

        func samples(_ outcomes: [ScrollOutcome], _ figure: (ScrollOutcome) -> Double) -> Samples {
            var samples = Samples()
            for outcome in outcomes { samples.append(figure(outcome)) }
            return samples
        }
        let median = { (outcomes: [ScrollOutcome]) in
            outcomes.sorted { $0.bytesForRowsNeverAtRest < $1.bytesForRowsNeverAtRest }[outcomes.count / 2]
        }
        let (oursMedian, naiveMedian) = (median(ours), median(naive))
        let setup =
            "\(Format.grouped(Self.rowCount)) rows, \(Self.visibleRows) visible, scrolled at "
            + "\(Int(simulation.rowsPerSecond)) rows/s for \(Format.seconds(simulation.duration)) (rows 0–"
            + "\(simulation.shownRowCount - 1) shown; a load stays in the 12-slot buffer "
            + "\(Format.seconds(12 / simulation.rowsPerSecond))), then stopped; server: \(Int(Self.latency * 1_000)) ms "
            + "latency, \(Format.grouped(Self.bytesPerSecond)) bytes/s per connection, 16 KiB per row; 6 connections per "
            + "host on both sides; \(ours.count) runs each, alternating which goes first"
        let counts =
            "server-side body bytes (`bodyBytesSent`: what reached the socket, even after the client hung up) "
            + "minus one object per row at rest; median run: manager \(oursMedian.requests) requests "
            + "(\(oursMedian.requestsForRowsNeverAtRest) for rows never at rest), \(oursMedian.cancelledByBuffer) loads "
            + "cancelled by the buffer, \(Format.bytes(Double(oursMedian.clientBytes))) received by the client; naive "
            + "\(naiveMedian.requests) requests (\(naiveMedian.requestsForRowsNeverAtRest) for rows never at rest), "
            + "\(Format.bytes(Double(naiveMedian.clientBytes))) received"
        let shown =
            "from the stop until each of the 8 rows at rest has been shown in its cell (for the naive loader: its "
            + "image arrived, even if an older download overwrote it later); at the end \(naiveMedian.cellsShowingWrongRow) "
            + "of 8 naive cells showed another row's image (the seed's wrong-image bug), "
            + "\(oursMedian.cellsShowingWrongRow) of ours"
            + (naive.allSatisfy(\.allShown) ? "" : "; the naive loader missed the 60 s deadline in some runs")
        return [
            .comparing(
                "\(label): bytes downloaded for rows never at rest", ours: samples(ours) { Double($0.bytesForRowsNeverAtRest) },
                baseline: samples(naive) { Double($0.bytesForRowsNeverAtRest) }, baselineName: "naive loader",
                write: Format.bytes, direction: .atMost, limit: 0.1, target: "≤ 0.1×", notes: [setup, counts]),
            .comparing(
                "\(label): time until the \(Self.visibleRows) rows at rest are all shown", ours: samples(ours, \.secondsUntilShown),
                baseline: samples(naive, \.secondsUntilShown), baselineName: "naive loader", write: Format.seconds,
                direction: .atMost, limit: 0.5, target: "≤ 0.5×", notes: [shown]),
        ]
    }

    /// A shaped server answering every row's path with 16 KiB.
    private func makeServer() throws -> LoopbackServer {
        let server = try LoopbackServer(configuration: .init(latency: Self.latency, bytesPerSecond: Self.bytesPerSecond))
        let body = Data((0..<Self.objectSize).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        server.setFallback { request in request.path.hasPrefix("/rows/") ? .ok(body) : nil }
        return server
    }

    private static func path(_ row: Int) -> String { "/rows/\(row).bin" }

    /// The scroll with eight `ObjectUser` cells re-managed through a manager with a loading buffer of 12.
    private func runManager(_ simulation: ScrollSimulation) throws -> ScrollOutcome {
        let server = try makeServer()
        defer { server.stop() }
        let manager = ObjectManager(loadingBufferSize: 12, memoryCacheSize: 20)
        let decoder = PayloadDecoder()
        let rows = (0..<simulation.shownRowCount).map { ObjectRequest(url: server.url(Self.path($0))) }
        let cells = (0..<simulation.visibleRows).map { _ in ObjectUser(decoder: decoder) }
        simulation.run { row in
            let cell = cells[row % cells.count]
            cell.request = rows[row]
            manager.manage(cell)
        }
        let (seconds, shown) = waitUntilShown(simulation) { row in
            let cell = cells[row % cells.count]
            return cell.object != nil && cell.request == rows[row]
        }
        return outcome(
            server, simulation, seconds: seconds, shown: shown,
            clientBytes: manager.statistics.bytesDownloaded,
            cancelledByBuffer: manager.statistics.loadsCancelledByBuffer
        ) { row in
            let cell = cells[row % cells.count]
            return cell.object != nil && cell.request == rows[row]
        }
    }

    /// The scroll with eight `UIImageView+Cached` views.
    private func runNaive(_ simulation: ScrollSimulation) throws -> ScrollOutcome {
        let server = try makeServer()
        defer { server.stop() }
        let cache = NaiveImageCache()
        defer { cache.invalidate() }
        let urls = (0..<simulation.shownRowCount).map { server.url(Self.path($0)) }
        let views = (0..<simulation.visibleRows).map { _ in NaiveImageView(cache: cache) }
        simulation.run { row in views[row % views.count].load(from: urls[row]) }
        let (seconds, shown) = waitUntilShown(simulation) { row in views[row % views.count].hasShown(urls[row]) }
        return outcome(
            server, simulation, seconds: seconds, shown: shown, clientBytes: cache.bytesReceived,
            cancelledByBuffer: 0
        ) { row in views[row % views.count].shownURL == urls[row] }
    }

    /// Polls until every row at rest is shown (at most 60 s); returns the seconds it took and whether it happened.
    private func waitUntilShown(_ simulation: ScrollSimulation, isShown: (Int) -> Bool) -> (Double, Bool) {
        let stop = Stopwatch.now()
        while Stopwatch.seconds(since: stop) < 60 {
            if simulation.restingRows.allSatisfy(isShown) { return (Stopwatch.seconds(since: stop), true) }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return (Stopwatch.seconds(since: stop), false)
    }

    /// Waits until the server has sent nothing for half a second (at most 30 s), then reads its
    /// counts and which cells at rest show their own row (`showsOwnRow`).
    private func outcome(
        _ server: LoopbackServer, _ simulation: ScrollSimulation, seconds: Double, shown: Bool,
        clientBytes: Int, cancelledByBuffer: Int, showsOwnRow: (Int) -> Bool
    ) -> ScrollOutcome {
        var last = server.bodyBytesSent
        var quietSince = Stopwatch.now()
        let start = Stopwatch.now()
        while Stopwatch.seconds(since: quietSince) < 0.5, Stopwatch.seconds(since: start) < 30 {
            Thread.sleep(forTimeInterval: 0.05)
            let now = server.bodyBytesSent
            if now != last { (last, quietSince) = (now, Stopwatch.now()) }
        }
        let restRequests = simulation.restingRows.map { server.requestCount(for: Self.path($0)) }
        let restBytes = restRequests.filter { $0 > 0 }.count * Self.objectSize
        return ScrollOutcome(
            secondsUntilShown: seconds, allShown: shown, bytesForRowsNeverAtRest: max(0, last - restBytes),
            requests: server.totalRequestCount, requestsForRowsNeverAtRest: server.totalRequestCount - restRequests.reduce(0, +),
            clientBytes: clientBytes, cancelledByBuffer: cancelledByBuffer,
            cellsShowingWrongRow: simulation.restingRows.filter { !showsOwnRow($0) }.count)
    }
}
