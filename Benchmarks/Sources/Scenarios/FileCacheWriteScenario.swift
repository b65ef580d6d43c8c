import Foundation
import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes (target: at most the baseline's time in memory, 1.25× it on the disk): `FileCache.store(_:forKey:metadata:)` of 1,000 entries of 256 KiB
/// into a new, empty cache, against `Data.write(to:options: .atomic)` of the same bytes to 1,000
/// files of one directory, in memory (tmpfs) and on the disk. Each repetition writes into a new
/// directory (created untimed, deleted untimed after it).
struct FileCacheWriteScenario: BenchmarkScenario {
    let identifier = "file-cache-write"
    let usesNetwork = false

    static let entrySize = 256 << 10

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let count = context.pick(full: 1_000, quick: 300)
        var generator = SeededGenerator(seed: 0x3717E)
        let body = Data((0..<Self.entrySize).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let keys = (0..<count).map { "https://images.example.com/large/\($0).jpg" }
        var failure: String?
        var fileSystems: [Bool: String] = [:]

        /// Milliseconds to store every key in a new `FileCache` (or `BigFileCache`).
        func measureCache(inMemory: Bool, big: Bool = false) -> Double {
            do {
                let scratch = try ScratchDirectory(prefix: "write-cache", inMemory: inMemory)
                fileSystems[inMemory] = scratch.fileSystem
                let root = scratch.appending("cache")
                let cache: any FileCaching = big ? try BigFileCache(directory: root) : try FileCache(directory: root)
                let milliseconds =
                    try Stopwatch.seconds {
                        for key in keys { try cache.store(body, forKey: key, metadata: FileCacheMetadata()) }
                    } * 1e3
                if cache.statistics.count != count { failure = "the cache holds \(cache.statistics.count) of \(count)" }
                return milliseconds
            } catch {
                failure = "cache: \(error)"
                return .infinity
            }
        }
        /// Milliseconds to write every entry's bytes to its own file with `Data.write(to:options:)`.
        func measurePlain(inMemory: Bool, options: Data.WritingOptions = .atomic) -> Double {
            do {
                let scratch = try ScratchDirectory(prefix: "write-plain", inMemory: inMemory)
                let files = (0..<count).map { scratch.appending("\($0).jpg") }
                return try Stopwatch.seconds {
                    for file in files { try body.write(to: file, options: options) }
                } * 1e3
            } catch {
                failure = "Data.write: \(error)"
                return .infinity
            }
        }
        /// Milliseconds to write every entry's bytes as `.atomic` does, without its `fsync`: a new
        /// temporary file, `write`, `close`, `rename` (the floor of any crash-safe write).
        func measureRaw(inMemory: Bool) -> Double {
            do {
                let scratch = try ScratchDirectory(prefix: "write-raw", inMemory: inMemory)
                let paths = (0..<count).map { (scratch.appending("\($0).tmp").path, scratch.appending("\($0).jpg").path) }
                return Stopwatch.seconds {
                    for (temporary, final) in paths {
                        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                        let written = body.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                        close(descriptor)
                        if descriptor < 0 || written != body.count || rename(temporary, final) != 0 {
                            failure = "raw write failed: errno \(errno)"
                        }
                    }
                } * 1e3
            } catch {
                failure = "raw write: \(error)"
                return .infinity
            }
        }
        let samples = context.measurement(full: 7, quick: 3).run([
            { measureCache(inMemory: true) },
            { measurePlain(inMemory: true) },
            { measureCache(inMemory: false) },
            { measurePlain(inMemory: false) },
            { measureCache(inMemory: true, big: true) },
            { measurePlain(inMemory: true, options: []) },
            { measureRaw(inMemory: false) },
            { measureRaw(inMemory: true) },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let milliseconds = { (value: Double) in Format.number(value) + " ms" }
        let note =
            "total time to write \(Format.grouped(count)) × 256 KiB, median (min–max) of \(samples[0].count) "
            + "repetitions; ours: `store(_:forKey:metadata:)` into a new, empty cache (checksum, file in `loading/`, "
            + "rename into `ready/`, journal record); baseline: `Data.write(to:options: .atomic)` of the same bytes to "
            + "\(Format.grouped(count)) files of one new directory"
        // Times. In memory the target is the baseline's time (≤ 1.0×); on the disk it is on throughput
        // (≥ 0.8×), so that row reports the time ratio against its inverse, ≤ 1.25×.
        return [
            .comparing(
                "writing \(Format.grouped(count)) × 256 KiB into a `FileCache` in memory (\(fileSystems[true] ?? "?"))",
                ours: samples[0], baseline: samples[1], baselineName: "`Data.write(to:options: .atomic)`", write: milliseconds,
                direction: .atMost, limit: 1.0, target: "≤ 1.0× the time", notes: [note]),
            .comparing(
                "writing \(Format.grouped(count)) × 256 KiB into a `FileCache` on the disk (\(fileSystems[false] ?? "?"))",
                ours: samples[2], baseline: samples[3], baselineName: "`Data.write(to:options: .atomic)`", write: milliseconds,
                direction: .atMost, limit: 1.25, target: "≤ 1.25× the time (≥ 0.8× the throughput)"),
            .diagnostic(
                "(diagnostic) the same into a `BigFileCache` in memory",
                ours: samples[4], baseline: samples[1], baselineName: "`Data.write(to:options: .atomic)`", write: milliseconds),
            .diagnostic(
                "(diagnostic) `Data.write(to:)` without `.atomic`, in memory",
                ours: samples[5], baseline: samples[1], baselineName: "`Data.write(to:options: .atomic)`", write: milliseconds),
            .diagnostic(
                "(diagnostic) the `FileCache` on the disk against `open`/`write`/`close`/`rename` without `fsync` there",
                ours: samples[2], baseline: samples[6], baselineName: "the same without `fsync`", write: milliseconds,
                notes: [
                    "`Data.write(to:)` on Linux (swift-foundation) `fsync`s every file, with or without `.atomic` "
                        + "(`.atomic`: a temporary file, `fsync`, `rename`): that is what the disk row's baseline pays per "
                        + "file; the caches never `fsync` an entry (a file torn by a power loss fails its checksum and is "
                        + "reloaded), so this row compares them with the same system calls without the `fsync`"
                ]),
            .diagnostic(
                "(diagnostic) the `FileCache` in memory against `open`/`write`/`close`/`rename` there",
                ours: samples[0], baseline: samples[7], baselineName: "the same without `fsync`", write: milliseconds),
        ]
    }
}
