import Foundation
import ManagedCache

/// Misses right after an opening (target: at most 2× a miss once the opening has finished): a
/// new `BigFileCache` instance on a cache of 100,000 entries, closed cleanly before, looks up
/// 1,000 distinct keys it does not hold as soon as `init` returns, while the journal's replay
/// runs in the background; then, on the same instance once the replay is complete (`statistics`
/// waits for it), 1,000 other such keys. Both on tmpfs, warm. Before misses were answered from the
/// journal, the first one waited for the whole replay.
struct BigFileCacheOpenMissScenario: BenchmarkScenario {
    let identifier = "file-cache-open-miss"
    let usesNetwork = false

    /// Misses per phase.
    static let missCount = 1_000

    /// What one repetition measured.
    private struct Round {
        /// Mean microseconds per miss right after `init` returned, and the slowest of them.
        var earlyMean = 0.0
        var earlySlowest = 0.0
        /// Milliseconds from the start of `init` until `statistics` returned (the replay complete).
        var wholeOpening = 0.0
        /// Mean microseconds per miss once the opening has finished.
        var laterMean = 0.0
    }

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let count = context.pick(full: 100_000, quick: 30_000)
        let scratch = try ScratchDirectory(prefix: "open-miss", inMemory: true)
        let root = scratch.appending("big")
        let tailRoot = scratch.appending("tail")
        let tailCount = count * 3 / 100
        let buildStart = Stopwatch.now()
        for directory in [root, tailRoot] {
            let big = try BigFileCache(directory: directory)
            try FileCacheFixture.fill(big, count: count, size: 256)
            try big.flush()
        }
        do {
            // A second session's entries, fewer than make the closing rewrite the lookup table
            // (1/16 of the journal): lookups before the replay scan them after the table.
            let big = try BigFileCache(directory: tailRoot)
            try FileCacheFixture.fill(big, count: tailCount, size: 256, firstIndex: count)
            try big.flush()
        }
        let buildSeconds = Stopwatch.seconds(since: buildStart)

        var failure: String?
        var round = 0
        /// Looks up `keys` (none of them stored); returns the mean and the slowest, in microseconds.
        func misses(_ cache: BigFileCache, _ keys: [String]) -> (mean: Double, slowest: Double) {
            var slowest = 0.0
            let start = Stopwatch.now()
            for key in keys {
                let one = Stopwatch.now()
                if cache.entry(forKey: key) != nil { failure = "\(key) was found" }
                slowest = max(slowest, Stopwatch.seconds(since: one) * 1e6)
            }
            return (Stopwatch.seconds(since: start) * 1e6 / Double(keys.count), slowest)
        }
        func measure(afterCrash: Bool, in root: URL = root) -> Round {
            round += 1
            let early = (0..<Self.missCount).map { "https://images.example.com/missing/\(round)/early-\($0).jpg" }
            let later = (0..<Self.missCount).map { "https://images.example.com/missing/\(round)/later-\($0).jpg" }
            if afterCrash {
                // What an instance killed while the cache was open leaves behind: its session file.
                try? Data().write(to: root.appendingPathComponent("sessions/benchmark-killed"))
            }
            var result = Round()
            do {
                let start = Stopwatch.now()
                let cache = try BigFileCache(directory: root)
                (result.earlyMean, result.earlySlowest) = misses(cache, early)
                let entries = cache.statistics.count
                result.wholeOpening = Stopwatch.seconds(since: start) * 1e3
                let expected = root == tailRoot ? count + tailCount : count
                if entries != expected { failure = "the cache opened with \(entries) of \(expected) entries" }
                result.laterMean = misses(cache, later).mean
            } catch {
                failure = "open: \(error)"
            }
            return result  // the cache closes here, untimed
        }
        let measurement = context.measurement(full: 9, quick: 3)
        var clean: [Round] = []
        var crashed: [Round] = []
        var tailed: [Round] = []
        for repetition in 0..<(measurement.warmUps + measurement.repetitions) {
            // Alternating which kind of opening goes first, as the paired measurements do.
            var pair: (clean: Round, crashed: Round) = (Round(), Round())
            if repetition % 2 == 0 {
                pair.clean = measure(afterCrash: false)
                pair.crashed = measure(afterCrash: true)
            } else {
                pair.crashed = measure(afterCrash: true)
                pair.clean = measure(afterCrash: false)
            }
            let tail = measure(afterCrash: false, in: tailRoot)
            guard repetition >= measurement.warmUps else { continue }
            clean.append(pair.clean)
            crashed.append(pair.crashed)
            tailed.append(tail)
        }
        if let failure { throw BenchmarkFailure(failure) }
        func samples(_ rounds: [Round], _ value: (Round) -> Double) -> Samples {
            var samples = Samples()
            for round in rounds { samples.append(value(round)) }
            return samples
        }
        let microseconds = { (value: Double) in Format.number(value) + " µs" }
        let milliseconds = { (value: Double) in Format.number(value) + " ms" }
        let laterName = "the same instance once its opening has finished"
        return [
            .comparing(
                "\(Format.grouped(Self.missCount)) misses right after opening a `BigFileCache` of \(Format.grouped(count)) "
                    + "entries (mean per miss)",
                ours: samples(clean, \.earlyMean), baseline: samples(clean, \.laterMean), baselineName: laterName,
                write: microseconds, direction: .atMost, limit: 2, target: "≤ 2×",
                notes: [
                    "`BigFileCache(directory:)` after a clean close, then `entry(forKey:)` of \(Format.grouped(Self.missCount)) "
                        + "distinct keys it does not hold, at once, while the journal's replay runs in the background; then "
                        + "`statistics` (which waits for the replay) and \(Format.grouped(Self.missCount)) other such keys on "
                        + "the same instance; mean per miss, median (min–max) of \(clean.count); on \(scratch.fileSystem), "
                        + "warm; fixtures built in \(Format.seconds(buildSeconds))"
                ]),
            .diagnostic(
                "(diagnostic) the slowest of those misses right after opening",
                ours: samples(clean, \.earlySlowest), baseline: samples(clean) { $0.wholeOpening * 1e3 },
                baselineName: "the whole opening (`init` until `statistics` returns)", write: microseconds,
                notes: [
                    "a miss that waited for the replay would take about as long as the whole opening (its first one did, "
                        + "before misses were answered from the journal)"
                ]),
            .diagnostic(
                "(diagnostic) the same misses after a crash (a session file left behind)",
                ours: samples(crashed, \.earlyMean), baseline: samples(crashed, \.laterMean), baselineName: laterName,
                write: microseconds),
            .diagnostic(
                "(diagnostic) the same misses with \(Format.grouped(tailCount)) entries journaled after the lookup table",
                ours: samples(tailed, \.earlyMean), baseline: samples(tailed, \.laterMean), baselineName: laterName,
                write: microseconds,
                notes: [
                    "a second session stored \(Format.grouped(tailCount)) more entries and closed: too few for the closing "
                        + "to rewrite the lookup table (1/16 of the journal), so a lookup before the replay also looks past it"
                ]),
            .diagnostic(
                "(diagnostic) the whole opening after a clean close, the misses running beside it",
                ours: samples(clean, \.wholeOpening), baseline: samples(crashed, \.wholeOpening),
                baselineName: "the same after a crash (replay, reconciliation)", write: milliseconds),
        ]
    }
}
