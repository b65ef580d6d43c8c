import Foundation
import ManagedCache
#if canImport(Glibc)
import Glibc
#endif

/// One `BigFileCache` trim pass at 10,000 and at 100,000 entries, deleting the same number of
/// files (the 1,000 entries that have expired, about 100 per tenth of the buckets). The target:
/// the pass at 100,000 entries costs at most twice the pass at 10,000, as its cost should follow
/// the files deleted, not the cache's size. For context, each size is also compared with
/// unlinking as many files of the same size and with `FileCache`'s full trim of the same data
/// (which deletes all 1,000 at once). In memory (tmpfs), like the open scenario.
struct BigFileCacheTrimScenario: BenchmarkScenario {
    let identifier = "file-cache-trim"
    let usesNetwork = false

    /// Expired entries in every cache; a rotation of passes deletes them all.
    static let expiringCount = 1_000
    /// Bytes per entry.
    static let entrySize = 512

    /// What the passes over one cache measured.
    private struct Measured {
        var pass = Samples()
        var removed = Samples()
        var unlink = Samples()
        var fileCacheTrim = 0.0
        var fileCacheRemoved = 0
    }

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let sizes = context.pick(full: [10_000, 100_000], quick: [10_000, 30_000])
        var measured: [Measured] = []
        var fileSystem = ""
        for size in sizes {
            let scratch = try ScratchDirectory(prefix: "trim-\(size)", inMemory: true)
            fileSystem = scratch.fileSystem
            measured.append(try measure(size: size, in: scratch))
        }
        let (small, large) = (measured[0], measured[1])
        let milliseconds = { (value: Double) in Format.number(value * 1_000) + " ms" }
        func detail(_ index: Int) -> ResultRow {
            let values = measured[index]
            let perFile = values.fileCacheTrim / Double(max(1, values.fileCacheRemoved)) * 1e6
            let passPerFile = values.pass.median / max(1, values.removed.median) * 1e6
            return ResultRow(
                scenario: "(detail) one `BigFileCache` trim pass at \(Format.grouped(sizes[index])) entries, "
                    + "~\(Int(values.removed.median)) files deleted",
                ours: Format.median(values.pass, milliseconds),
                baseline: "`unlink` of as many files: \(Format.median(values.unlink, milliseconds)); `FileCache` full "
                    + "trim: \(milliseconds(values.fileCacheTrim)) for \(values.fileCacheRemoved) files",
                ratio: Format.ratio(values.pass.pairedRatio(to: values.unlink)) + " of unlink", target: "—", met: nil,
                notes: ["per file deleted: the pass \(Format.number(passPerFile)) µs, `unlink` "
                    + "\(Format.number(values.unlink.median / max(1, values.removed.median) * 1e6)) µs, `FileCache` full trim "
                    + "\(Format.number(perFile)) µs"])
        }
        return [
            .comparing(
                "one `BigFileCache` trim pass: \(Format.grouped(sizes[1])) vs \(Format.grouped(sizes[0])) entries, "
                    + "same files deleted (~\(Int(large.removed.median)))",
                ours: large.pass, baseline: small.pass, baselineName: "the pass at \(Format.grouped(sizes[0])) entries",
                write: milliseconds, direction: .atMost, limit: 2,
                target: "cost grows with files deleted, not cache size: ≤ 2× for a \(sizes[1] / sizes[0])× larger cache",
                notes: ["\(Self.expiringCount) of the entries expired (spread over the buckets by key hash), so each pass "
                    + "of a rotation deletes ~\(Self.expiringCount / BigFileCache.passesPerRotation); the \(BigFileCache.passesPerRotation) "
                    + "passes of one rotation are timed one by one, medians; baselines below: unlinking as many "
                    + "\(Self.entrySize)-byte files from one directory (created untimed before each), and `FileCache.trim()` "
                    + "on the same data (it deletes all \(Self.expiringCount) at once); all on \(fileSystem)"]),
            detail(0),
            detail(1),
        ]
    }

    /// Builds a `BigFileCache` and a `FileCache` of `size` entries whose last 1,000 expire, waits
    /// for them to expire, then times one rotation of passes, the unlinks and `FileCache.trim()`.
    private func measure(size: Int, in scratch: ScratchDirectory) throws -> Measured {
        let bigCache = try BigFileCache(directory: scratch.appending("big"))
        let fileCache = try FileCache(directory: scratch.appending("file"))
        let expiration = Date().addingTimeInterval(Double(size) / 10_000 + 2)
        try FileCacheFixture.fill(bigCache, count: size, size: Self.entrySize, expiring: Self.expiringCount,
                                  expiration: expiration)
        try FileCacheFixture.fill(fileCache, count: size, size: Self.entrySize, expiring: Self.expiringCount,
                                  expiration: expiration)
        let wait = expiration.timeIntervalSinceNow + 0.05
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }

        var result = Measured()
        let unlinkDirectory = scratch.appending("unlink")
        for pass in 0..<BigFileCache.passesPerRotation {
            let start = Stopwatch.now()
            guard let report = bigCache.trimPass() else { throw BenchmarkFailure("trim pass \(pass) failed") }
            result.pass.append(Stopwatch.seconds(since: start))
            result.removed.append(Double(report.entriesRemoved))

            try FileCacheFixture.createEmptyFiles(report.entriesRemoved, in: unlinkDirectory, size: Self.entrySize)
            let paths = (0..<report.entriesRemoved).map { unlinkDirectory.path + "/f\($0)" }
            result.unlink.append(Stopwatch.seconds {
                for path in paths where unlink(path) != 0 { BlackHole.consume(errno) }
            })
        }
        let remaining = bigCache.statistics.count
        guard remaining == size - Self.expiringCount else {
            throw BenchmarkFailure("BigFileCache kept \(remaining) entries after a rotation, expected \(size - Self.expiringCount)")
        }
        let before = fileCache.statistics.count
        result.fileCacheTrim = Stopwatch.seconds { fileCache.trim() }
        result.fileCacheRemoved = before - fileCache.statistics.count
        return result
    }
}
