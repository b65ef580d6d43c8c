import Foundation
import ManagedCache

#if canImport(Glibc)
import Glibc
#endif

/// One `BigFileCache` trim pass at 10,000 and at 100,000 entries, deleting the same number of
/// files (batches of 1,000 entries that have expired, about 100 per tenth of the buckets). The target:
/// the pass at 100,000 entries costs at most twice the pass at 10,000, as its cost should follow
/// the files deleted, not the cache's size. For context, each size is also compared with
/// unlinking as many files of the same size and with `FileCache`'s full trim of the same data
/// (which deletes all 1,000 at once). In memory (tmpfs), like the open scenario.
struct BigFileCacheTrimScenario: BenchmarkScenario {
    let identifier = "file-cache-trim"
    let usesNetwork = false

    /// Entries in each batch that expires; a rotation of passes deletes one batch.
    static let expiringCount = 1_000
    /// Batches, expiring half a second apart: one rotation of passes is measured per batch.
    static let batches = 3
    /// Bytes per entry.
    static let entrySize = 512

    /// What the passes over one cache measured.
    private struct Measured {
        var pass = Samples()
        var removed = Samples()
        var unlink = Samples()
        var fileCacheTrim = Samples()
        var fileCacheRemoved = Samples()
        /// The commit that puts the cache (no expiring entries left, count limit = its size) one over its limit.
        var overLimitCommit = Samples()
        var overLimitRemoved = Samples()
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
            let perFile = values.fileCacheTrim.median / max(1, values.fileCacheRemoved.median) * 1e6
            let passPerFile = values.pass.median / max(1, values.removed.median) * 1e6
            return ResultRow(
                scenario: "(detail) one `BigFileCache` trim pass at \(Format.grouped(sizes[index])) entries, "
                    + "~\(Int(values.removed.median)) files deleted",
                ours: Format.median(values.pass, milliseconds),
                baseline: "`unlink` of as many files: \(Format.median(values.unlink, milliseconds)); `FileCache` full "
                    + "trim: \(Format.median(values.fileCacheTrim, milliseconds)) for \(Int(values.fileCacheRemoved.median)) files",
                ratio: Format.ratio(values.pass.pairedRatio(to: values.unlink)) + " of unlink", target: "—", met: nil,
                notes: [
                    "per file deleted: the pass \(Format.number(passPerFile)) µs, `unlink` "
                        + "\(Format.number(values.unlink.median / max(1, values.removed.median) * 1e6)) µs, `FileCache` full trim "
                        + "\(Format.number(perFile)) µs; without expiring entries, the commit that put the cache one entry over "
                        + "a count limit of its size took \(Format.median(values.overLimitCommit, milliseconds)) and deleted "
                        + "\(Int(values.overLimitRemoved.median)) files (\(Format.number(values.overLimitCommit.median / max(1, values.overLimitRemoved.median) * 1e6)) "
                        + "µs per file; 3 rounds)"
                ])
        }
        return [
            .comparing(
                "one `BigFileCache` trim pass: \(Format.grouped(sizes[1])) vs \(Format.grouped(sizes[0])) entries, "
                    + "same files deleted (~\(Int(large.removed.median)))",
                ours: large.pass, baseline: small.pass, baselineName: "the pass at \(Format.grouped(sizes[0])) entries",
                write: milliseconds, direction: .atMost, limit: 2,
                target: "cost grows with files deleted, not cache size: ≤ 2× for a \(sizes[1] / sizes[0])× larger cache",
                notes: [
                    "\(Self.batches) batches of \(Self.expiringCount) entries expire half a second apart (spread over "
                        + "the buckets by key hash), so each pass of the rotation after a batch expires deletes "
                        + "~\(Self.expiringCount / BigFileCache.passesPerRotation); the \(Self.batches * BigFileCache.passesPerRotation) "
                        + "passes are timed one by one, medians; baselines below: unlinking as many "
                        + "\(Self.entrySize)-byte files from one directory (created untimed before each), and `FileCache.trim()` "
                        + "on the same data after each batch (it deletes the \(Self.expiringCount) at once); all on \(fileSystem)"
                ]),
            detail(0),
            detail(1),
        ]
    }

    /// Builds a `BigFileCache` and a `FileCache` of `size` entries, of which three batches of
    /// 1,000 expire half a second apart; after each batch expires, times one rotation of passes
    /// (with the matching unlinks) and one `FileCache.trim()`.
    private func measure(size: Int, in scratch: ScratchDirectory) throws -> Measured {
        let bigCache = try BigFileCache(directory: scratch.appending("big"))
        let fileCache = try FileCache(directory: scratch.appending("file"))
        let caches: [any FileCaching] = [bigCache, fileCache]
        let plainCount = size - Self.batches * Self.expiringCount
        for cache in caches { try FileCacheFixture.fill(cache, count: plainCount, size: Self.entrySize) }
        let firstExpiry = Date().addingTimeInterval(1)
        let expiries = (0..<Self.batches).map { firstExpiry.addingTimeInterval(0.5 * Double($0)) }
        for cache in caches {
            for (batch, expiry) in expiries.enumerated() {
                try FileCacheFixture.fill(
                    cache, count: Self.expiringCount, size: Self.entrySize,
                    firstIndex: plainCount + batch * Self.expiringCount, expiration: expiry)
            }
        }
        guard Date() < firstExpiry else { throw BenchmarkFailure("the fixture took too long to build") }

        var result = Measured()
        let unlinkDirectory = scratch.appending("unlink")
        for expiry in expiries {
            let wait = expiry.timeIntervalSinceNow + 0.05
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            for pass in 0..<BigFileCache.passesPerRotation {
                let start = Stopwatch.now()
                guard let report = bigCache.trimPass() else { throw BenchmarkFailure("trim pass \(pass) failed") }
                result.pass.append(Stopwatch.seconds(since: start))
                result.removed.append(Double(report.entriesRemoved))

                try FileCacheFixture.createEmptyFiles(report.entriesRemoved, in: unlinkDirectory, size: Self.entrySize)
                let paths = (0..<report.entriesRemoved).map { unlinkDirectory.path + "/f\($0)" }
                result.unlink.append(
                    Stopwatch.seconds {
                        for path in paths where unlink(path) != 0 { BlackHole.consume(errno) }
                    })
            }
            let before = fileCache.statistics.count
            result.fileCacheTrim.append(Stopwatch.seconds { fileCache.trim() })
            result.fileCacheRemoved.append(Double(before - fileCache.statistics.count))
        }
        let remaining = bigCache.statistics.count
        guard remaining == plainCount else {
            throw BenchmarkFailure("BigFileCache kept \(remaining) entries after the passes, expected \(plainCount)")
        }
        try bigCache.flush()

        // The other way a pass deletes: over a limit, without expiring entries (no slice scan).
        // Three times: reopen with a count limit equal to the count, commit one more entry.
        let body = Data(repeating: 0x5A, count: Self.entrySize)
        var current = plainCount
        for round in 0..<3 {
            let limited = try BigFileCache(directory: scratch.appending("big"), configuration: .init(countLimit: current))
            let before = limited.statistics.count
            let start = Stopwatch.now()
            try limited.store(body, forKey: FileCacheFixture.key(size + round), metadata: FileCacheMetadata())
            result.overLimitCommit.append(Stopwatch.seconds(since: start))
            current = limited.statistics.count
            result.overLimitRemoved.append(Double(before + 1 - current))
            try limited.flush()
        }
        return result
    }
}
