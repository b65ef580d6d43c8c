import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking

/// What one `manage` call costs the thread that makes it (bound: p99 ≤ 0.25 ms, maximum ≤ 4 ms; a
/// remembered failure's median within 3× a memory hit's in the same phase): a "main" thread configures
/// reusable cells as a scrolling list does, 10 calls then 2 ms, over a mix of memory hits,
/// remembered failures, file-cache hits delivered synchronously and new URLs that start a load;
/// first alone, then while background threads run an app-like mix on the same manager (loads,
/// 404s, releases, removals, memory pressure, prefetches), then under faults: the same mix with
/// the failing keys failing again every 0.2 s (the failure memory's interval), 503s, connections
/// reset mid-body and trims of the file cache. Each call is timed on its own and
/// classified by what it did; right after it, the same thread times a lookup in a locked
/// `Dictionary` (the floor: what the machine itself costs that thread at that moment).
struct ManageLatencyScenario: BenchmarkScenario {
    let identifier = "manage-latency"
    let usesNetwork = true

    /// Background threads of the loaded phase (`MANAGEDCACHE_LATENCY_THREADS` overrides it).
    static var backgroundThreads: Int {
        ProcessInfo.processInfo.environment["MANAGEDCACHE_LATENCY_THREADS"].flatMap(Int.init) ?? 4
    }

    /// A nice value for the measuring thread while it measures (`MANAGEDCACHE_LATENCY_NICE`, a
    /// diagnostic; default: unchanged, the same priority as every other thread, as the bound was
    /// first measured). An app's main thread runs above the default priority (user-interactive QoS), and
    /// libdispatch on Linux gives that QoS nice −4, as it gives its manager thread.
    static var measuringNice: Int32? {
        ProcessInfo.processInfo.environment["MANAGEDCACHE_LATENCY_NICE"].flatMap { Int32($0) }
    }

    /// Whether the manager paces its loads (`MANAGEDCACHE_LATENCY_RATE_LIMIT=off` turns the
    /// default `LoadRateLimit` off, for comparison; the rows then say so).
    static var usesRateLimit: Bool {
        ProcessInfo.processInfo.environment["MANAGEDCACHE_LATENCY_RATE_LIMIT"] != "off"
    }

    /// The bound for every outcome: p99 and maximum, in milliseconds.
    static let p99Limit = 0.25
    static let maximumLimit = 4.0
    /// A remembered failure's median, at most this many times a memory hit's in the same phase:
    /// both are answered inside `manage` from what the manager already knows.
    static let rememberedFailureMedianLimit = 3.0

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let calls = context.pick(full: 20_000, quick: 6_000)
        let server = try LatencyServer.start()
        defer { server.stop() }
        var rows: [ResultRow] = []
        for (threads, faults) in [(0, false), (Self.backgroundThreads, false), (Self.backgroundThreads, true)] {
            let fixture = try LatencyFixture(server: server, calls: calls, rateLimited: Self.usesRateLimit, faults: faults)
            defer { fixture.tearDown() }
            let background = BackgroundMix(
                manager: fixture.manager, server: server, threads: threads, faults: faults ? fixture.faultTargets : nil)
            let requestsBefore = server.totalRequestCount
            background.start()
            let (timings, nice) = ThreadNice.while(Self.measuringNice) {
                var timings = fixture.measure(calls: calls)
                timings.work = fixture.measureWorkFloor(runs: calls / 4)
                return timings
            }
            let backgroundOperations = background.stop()
            let phase = Phase(
                threads: threads, backgroundOperations: backgroundOperations,
                requests: server.totalRequestCount - requestsBefore, nice: nice, rateLimited: Self.usesRateLimit,
                faults: faults)
            rows += Self.rows(timings, phase: phase)
        }
        return rows
    }

    /// What a phase ran under, for its rows' names.
    struct Phase {
        let threads: Int
        let backgroundOperations: Int
        /// The requests the server answered during the phase (the measured calls' loads and the
        /// background's).
        let requests: Int
        /// The measuring thread's nice value, when `MANAGEDCACHE_LATENCY_NICE` set it.
        var nice: Int32?
        var rateLimited = true
        /// The background also makes faults: failures every 0.2 s, 503s, resets, trims.
        var faults = false

        var name: String {
            var name =
                threads == 0
                ? "alone"
                : "\(faults ? "under faults" : "under load") (\(threads) threads, \(Format.grouped(backgroundOperations)) operations)"
            name += ", \(Format.grouped(requests)) requests"
            if !rateLimited { name += ", without a load rate limit" }
            if let nice { name += ", measuring at nice \(nice)" }
            return name
        }
    }

    /// One row per outcome seen at least 50 times, and the floor's row. A remembered failure's
    /// row compares its median with a memory hit's in the same phase.
    static func rows(_ timings: LatencyTimings, phase: Phase) -> [ResultRow] {
        let alone = phase.threads == 0
        let floor = Percentiles(timings.floor)
        let hits = timings.byOutcome[.memoryHit, default: []]
        var rows: [ResultRow] = []
        for outcome in LatencyOutcome.allCases {
            let samples = timings.byOutcome[outcome, default: []]
            guard samples.count >= 50 else { continue }
            let ours = Percentiles(samples)
            let met = ours.p99 <= p99Limit && ours.maximum < maximumLimit
            if outcome == .rememberedFailure, hits.count >= 50 {
                rows.append(rememberedFailureRow(ours, count: samples.count, hit: Percentiles(hits), phase: phase, met: met))
                continue
            }
            rows.append(
                ResultRow(
                    scenario: "`manage` latency, \(outcome.rawValue), \(phase.name): \(Format.grouped(samples.count)) calls",
                    ours: ours.description, baseline: "locked `Dictionary`: \(floor.description)",
                    ratio: Format.ratio(floor.p99 > 0 ? ours.p99 / floor.p99 : .infinity),
                    target: "p99 ≤ \(p99Limit) ms, max < \(Int(maximumLimit)) ms", met: met,
                    notes: outcome == .memoryHit && alone ? [LatencyTimings.explanation] : []))
        }
        // The machine's floor for a call as long as a load start: the bound for code with no lock.
        let work = Percentiles(timings.work)
        rows.append(
            ResultRow(
                scenario: "lock-free work of \(Int(LatencyTimings.workMicroseconds)) µs on the same thread, \(phase.name): "
                    + "\(Format.grouped(timings.work.count)) runs",
                ours: work.description, baseline: "locked `Dictionary`: \(floor.description)",
                ratio: Format.ratio(floor.p99 > 0 ? work.p99 / floor.p99 : .infinity),
                target: "p99 ≤ \(p99Limit) ms, max < \(Int(maximumLimit)) ms (informational)", met: nil,
                notes: alone ? [LatencyTimings.workExplanation] : []))
        return rows
    }
}

extension ManageLatencyScenario {
    /// The remembered failures' row: their percentiles beside a memory hit's median in the same
    /// phase, the ratio of the medians, and both bounds (`met`: the p99 and maximum bound).
    static func rememberedFailureRow(_ ours: Percentiles, count: Int, hit: Percentiles, phase: Phase, met: Bool) -> ResultRow {
        let ratio = hit.p50 > 0 ? ours.p50 / hit.p50 : .infinity
        let medians = { (value: Double) in String(format: "%.4f", value) }
        return ResultRow(
            scenario: "`manage` latency, \(LatencyOutcome.rememberedFailure.rawValue), \(phase.name): \(Format.grouped(count)) calls",
            ours: "\(ours.description) (p50 \(medians(ours.p50)))",
            baseline: "memory hit, same phase: p50 \(medians(hit.p50))",
            ratio: Format.ratio(ratio) + " (p50 / p50)",
            target: "p50 ≤ \(Int(rememberedFailureMedianLimit))× a memory hit's, p99 ≤ \(p99Limit) ms, max < \(Int(maximumLimit)) ms",
            met: met && ratio <= rememberedFailureMedianLimit,
            notes: phase.threads == 0 ? [rememberedFailureExplanation] : [])
    }

    /// The note beside the first remembered-failure row.
    static let rememberedFailureExplanation =
        "remembered failure: figures in ms, its p50 to 4 decimals beside them; ratio = its p50 / the memory hits' p50 in the same phase"
}

/// What a measured call did, told by the user's callback (on the calling thread, before
/// `manage` returned) or by its absence.
enum LatencyOutcome: String, CaseIterable, Sendable {
    case memoryHit = "memory hit"
    case sharedObject = "shared object"
    case fileCacheHit = "file-cache hit (synchronous)"
    case rememberedFailure = "remembered failure"
    case startedLoad = "started or joined a load"
}

/// Call durations in milliseconds, by outcome, and the floors'.
struct LatencyTimings {
    var byOutcome: [LatencyOutcome: [Double]] = [:]
    var floor: [Double] = []
    /// `CalibratedWork` of `workMicroseconds`, timed in a pass after the calls (same conditions).
    var work: [Double] = []

    /// About the median of a call that starts a load, alone, on a quiet machine (0.018–0.028 ms).
    static let workMicroseconds = 25.0

    static let workExplanation =
        "lock-free work: arithmetic calibrated to \(Int(workMicroseconds)) µs of CPU, timed on the measuring thread in a "
        + "pass right after the calls, under the same background; what the machine alone (other threads taking the 2 cores) "
        + "makes of work as long as a load start"

    static let explanation =
        "ratio = p99 / the floor's p99; figures are p50 / p99 / p99.9 / max in ms; each call is timed alone "
        + "(monotonic clock), the floor is a lookup in a `Dictionary` behind a `Mutex` timed on the same thread right after it"
}

/// p50 / p99 / p99.9 / max of a sample set, in milliseconds.
struct Percentiles: CustomStringConvertible {
    let p50: Double
    let p99: Double
    let p999: Double
    let maximum: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        func at(_ fraction: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
        }
        p50 = at(0.5)
        p99 = at(0.99)
        p999 = at(0.999)
        maximum = sorted.last ?? 0
    }

    var description: String {
        [p50, p99, p999, maximum].map { String(format: "%.3f", $0) }.joined(separator: " / ")
    }
}

/// The loopback routes: `/ok/<n>` small bodies, `/missing/<n>` 404, `/slow/<n>` dripped,
/// `/unavailable/<n>` 503, `/reset/<n>` a connection reset after the first 1,000 bytes of the body.
enum LatencyServer {
    static func body(_ index: Int) -> Data {
        Data((0..<(2_000 + index % 6_000)).map { UInt8(truncatingIfNeeded: $0 &+ index) })
    }

    static func start() throws -> LoopbackServer {
        let server = try LoopbackServer(configuration: .init(recordedRequestsPerPath: 0))
        server.setFallback { request in
            let parts = request.path.split(separator: "/")
            guard parts.count == 2, let index = Int(parts[1]) else { return nil }
            switch parts[0] {
            case "ok": return .ok(body(index))
            case "missing": return .status(404)
            case "slow": return LoopbackResponse.ok(body(index)).behaving(.drip(chunkSize: 1_000, interval: 0.01))
            case "unavailable": return .status(503)
            case "reset": return LoopbackResponse.ok(body(index)).behaving(.reset(afterBodyBytes: 1_000))
            default: return nil
            }
        }
        return server
    }
}

/// The calling thread's nice value, changed for a while (Linux: `setpriority` with `who` 0 sets
/// the calling thread's alone). Elsewhere, for `nil`, or when the system refuses, the body runs
/// unchanged.
enum ThreadNice {
    /// Runs `body` at `nice`; returns its result and the nice value it ran at (`nil`: unchanged).
    static func `while`<Result>(_ nice: Int32?, _ body: () -> Result) -> (Result, Int32?) {
        #if os(Linux)
        guard let nice else { return (body(), nil) }
        errno = 0
        let previous = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        guard setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0 else {
            FileHandle.standardError.write(Data("manage-latency: cannot set nice \(nice) (errno \(errno)); measuring unchanged\n".utf8))
            return (body(), nil)
        }
        defer { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, previous) }
        return (body(), nice)
        #else
        return (body(), nil)
        #endif
    }
}
