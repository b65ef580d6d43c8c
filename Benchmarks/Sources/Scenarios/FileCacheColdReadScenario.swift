import Foundation
import ManagedCache

/// Cold-instance reads (target: at least 0.8× the throughput of `Data(contentsOf:)`): a new `FileCache` instance on a directory of 1,000
/// entries of 256 KiB reads every one back (`entry(forKey:)` + `readData(for:)`, the checksum
/// checked or its remembered verification trusted), against `Data(contentsOf:)` on the same files.
///
/// Two of our sides: entries verified by an earlier instance (the journal remembers it: the case
/// of every launch after the first read of an entry), and entries never read since they were
/// written (each repetition rewrites them, untimed, so every read runs the checksum).
struct FileCacheColdReadScenario: BenchmarkScenario {
    let identifier = "file-cache-cold-read"
    let usesNetwork = false

    static let entrySize = 256 << 10

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let count = context.pick(full: 1_000, quick: 300)
        var generator = SeededGenerator(seed: 0xC01D)
        let body = Data((0..<Self.entrySize).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let keys = (0..<count).map { "https://images.example.com/large/\($0).jpg" }
        let directory = try ScratchDirectory(prefix: "file-cache-cold-read", inMemory: true)
        let verifiedRoot = directory.appending("verified")
        let freshRoot = directory.appending("fresh")

        func fill(_ root: URL) throws -> [URL] {
            let cache = try FileCache(directory: root)
            return try keys.map { try cache.store(body, forKey: $0, metadata: FileCacheMetadata()).fileURL }
        }
        let files = try fill(verifiedRoot)
        // A verification is remembered once the files' timestamps are older than the file
        // system's tick (50 ms on Linux): wait that out, then read everything once and close.
        Thread.sleep(forTimeInterval: 0.2)
        try readAll(verifiedRoot, keys)

        var failure: String?
        func measureCache(_ root: URL, refill: Bool) -> Double {
            do {
                if refill {
                    try? FileManager.default.removeItem(at: root)
                    _ = try fill(root)
                }
                return try Stopwatch.seconds { try readAll(root, keys) } * 1e3
            } catch {
                failure = "FileCache: \(error)"
                return .infinity
            }
        }
        func measurePlain() -> Double {
            Stopwatch.seconds {
                for file in files {
                    guard let data = try? Data(contentsOf: file), data.count == Self.entrySize else {
                        failure = "Data(contentsOf:) read the wrong size"
                        return
                    }
                    BlackHole.consume(data)
                }
            } * 1e3
        }
        let samples = context.measurement(full: 7, quick: 3).run([
            { measureCache(verifiedRoot, refill: false) },
            { measurePlain() },
            { measureCache(freshRoot, refill: true) },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let milliseconds = { (value: Double) in Format.number(value) + " ms" }
        // Times: a ratio of times above 1 is slower; the target is on throughput (≥ 0.8×), so
        // the row reports the time ratio against its inverse, ≤ 1.25×.
        return [
            .comparing(
                "cold-instance read of \(Format.grouped(count)) × 256 KiB `FileCache` entries verified by an earlier instance",
                ours: samples[0], baseline: samples[1], baselineName: "`Data(contentsOf:)`", write: milliseconds,
                direction: .atMost, limit: 1.25, target: "≤ 1.25× the time (≥ 0.8× the throughput)",
                notes: [
                    "total time, median (min–max) of \(samples[0].count) repetitions: open a new `FileCache` on the "
                        + "directory, `entry(forKey:)` and `readData(for:)` of every entry, close; files on "
                        + "\(directory.fileSystem) (in memory, like the page cache after a first read); the earlier instance "
                        + "read every entry once after the files' timestamps had settled, and the journal remembers it"
                ]),
            .diagnostic(
                "(diagnostic) the same read of entries never read since they were written (every read runs the checksum)",
                ours: samples[2], baseline: samples[1], baselineName: "`Data(contentsOf:)`", write: milliseconds,
                notes: [
                    "the cache is rewritten (untimed) before each repetition; the floor of this row is the checksum "
                        + "of 256 MiB (XXH64, which replaced CRC-32 to make writes faster: see `crc32`)"
                ]),
        ]
    }

    /// Opens a new instance on `root`, reads every key back and closes it.
    private func readAll(_ root: URL, _ keys: [String]) throws {
        let cache = try FileCache(directory: root)
        for key in keys {
            guard let entry = cache.entry(forKey: key) else { throw BenchmarkFailure("missing entry \(key)") }
            let data = try cache.readData(for: entry)
            guard data.count == Self.entrySize else { throw BenchmarkFailure("wrong size for \(key)") }
            BlackHole.consume(data)
        }
    }
}
