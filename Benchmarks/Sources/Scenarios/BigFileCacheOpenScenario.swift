import Foundation
import ManagedCache

/// Opening a `BigFileCache` of 100,000 entries (closed cleanly before) against listing one
/// directory of 100,000 names with `FileManager`, both in memory (tmpfs) so building the fixtures
/// takes seconds rather than minutes on this machine's disk.
struct BigFileCacheOpenScenario: BenchmarkScenario {
    let identifier = "file-cache-open"
    let usesNetwork = false

    /// Entries in the cache and names in the directory.
    static let entryCount = 100_000

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let count = context.pick(full: Self.entryCount, quick: 30_000)
        let scratch = try ScratchDirectory(prefix: "open", inMemory: true)
        let cacheDirectory = scratch.appending("cache")
        let namesDirectory = scratch.appending("names")
        let buildStart = Stopwatch.now()
        do {
            let cache = try BigFileCache(directory: cacheDirectory)
            try FileCacheFixture.fill(cache, count: count, size: 256)
            try cache.flush()
        }
        try FileCacheFixture.createEmptyFiles(count, in: namesDirectory)
        let buildSeconds = Stopwatch.seconds(since: buildStart)

        var failure: String?
        let (ours, baseline) = context.measurement(full: 7, quick: 3).run(
            ours: {
                let start = Stopwatch.now()
                do {
                    let cache = try BigFileCache(directory: cacheDirectory)
                    let entries = cache.statistics.count
                    let seconds = Stopwatch.seconds(since: start)
                    if entries != count { failure = "the cache opened with \(entries) of \(count) entries" }
                    return seconds
                } catch {
                    failure = "open: \(error)"
                    return 0
                }
            },
            baseline: {
                Stopwatch.seconds {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: namesDirectory.path)) ?? []
                    if names.count != count { failure = "listed \(names.count) of \(count) names" }
                }
            })
        if let failure { throw BenchmarkFailure(failure) }
        return [
            .comparing(
                "opening a `BigFileCache` of \(Format.grouped(count)) entries", ours: ours, baseline: baseline,
                baselineName: "listing one directory of \(Format.grouped(count)) names", write: Format.seconds,
                direction: .atMost, limit: 2, target: "≤ 2×",
                notes: [
                    "`BigFileCache(directory:)` until it reports its entry count, after a clean close; "
                        + "`FileManager.contentsOfDirectory(atPath:)`; both on \(scratch.fileSystem), warm; "
                        + "fixtures built in \(Format.seconds(buildSeconds)); median (min–max) of \(ours.count)"
                ])
        ]
    }
}
