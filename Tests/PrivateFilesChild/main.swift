// A child process for the private-files tests:
//
//     PrivateFilesChild <umask, octal> <work directory>
//
// Sets its umask first (a process-wide setting the test process must not change under its other
// tests), then makes every kind of file the package creates under <work directory>, which the
// parent made with `caller/` and `tmp/` in it (`TMPDIR` points at `tmp/`):
//
//   - a `FileCache` in `caller/` (a directory the caller made) and a `BigFileCache` in
//     `made/by/cache/big` (the cache creates it and its parents): entries stored, partial
//     downloads kept and resumed, trims that evict, `flush`, a reopening, `removeAll` and stores
//     after it;
//   - `FileURLDecoder`'s temporary copy of bytes in memory, and a download past
//     `inMemoryThreshold` spooled to a temporary file (from a loopback server).
//
// After each phase it prints "P <phase>" and then "M <mode, octal> <d|f> <path relative to the
// work directory>" for everything under the work directory; the parent checks the modes. It
// prints "DONE" at the end, and exits 2 when something it needs fails.

import Foundation
import LoopbackServer
import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("PrivateFilesChild: " + message + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let mask = mode_t(arguments[1], radix: 8) else { fail("usage: PrivateFilesChild <umask> <work>") }
umask(mask)
let work = URL(fileURLWithPath: arguments[2], isDirectory: true)

/// Prints the mode of everything under the work directory (items that vanish meanwhile, such as
/// a trash directory being deleted, are skipped).
func report(_ phase: String) {
    say("P \(phase)")
    let paths = FileManager.default.subpaths(atPath: work.path) ?? []
    for path in paths.sorted() {
        var info = stat()
        guard lstat(work.path + "/" + path, &info) == 0 else { continue }
        let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "d" : "f"
        say("M \(String(info.st_mode & 0o7777, radix: 8)) \(kind) \(path)")
    }
}

func bytes(_ seed: Int, count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) })
}

/// Stores, partial downloads (kept, resumed, kept again) and trims that evict.
func exercise(_ cache: some FileCaching, name: String) throws {
    for index in 0..<12 {
        _ = try cache.store(bytes(index, count: 4_096), forKey: "\(name)-\(index)", metadata: FileCacheMetadata())
    }
    let writer = try cache.makeWriter(forKey: "\(name)-partial")
    try writer.write(bytes(99, count: 10_000))
    writer.suspend(validator: "\"v1\"")
    guard let partial = cache.partialDownload(forKey: "\(name)-partial") else { fail("\(name): no partial download kept") }
    report("\(name) partial kept")
    let resumed = try cache.makeWriter(resuming: partial)
    try resumed.write(bytes(100, count: 5_000))
    resumed.suspend(validator: "\"v2\"")
    guard cache.partialDownload(forKey: "\(name)-partial") != nil else { fail("\(name): no partial download kept again") }
    cache.trim()
}

do {
    let caller = work.appendingPathComponent("caller", isDirectory: true)
    let big = work.appendingPathComponent("made/by/cache/big", isDirectory: true)
    let limits = (byteLimit: 24_576, countLimit: 6)
    do {
        let single = try FileCache(
            directory: caller, configuration: .init(byteLimit: limits.byteLimit, countLimit: limits.countLimit))
        try exercise(single, name: "single")
        try single.flush()
        let bucketed = try BigFileCache(
            directory: big, configuration: .init(byteLimit: limits.byteLimit, countLimit: limits.countLimit))
        try exercise(bucketed, name: "big")
        _ = bucketed.trimPass()
        try bucketed.flush()
        report("stored, partial downloads, trims")
    }
    // Reopened (the instances above are released): the opening recreates nothing wider.
    let single = try FileCache(directory: caller, configuration: .init(byteLimit: limits.byteLimit))
    let bucketed = try BigFileCache(directory: big, configuration: .init(byteLimit: limits.byteLimit))
    _ = try single.store(bytes(7, count: 2_048), forKey: "after reopening", metadata: FileCacheMetadata())
    _ = try bucketed.store(bytes(8, count: 2_048), forKey: "after reopening", metadata: FileCacheMetadata())
    report("reopened")
    single.removeAll()
    bucketed.removeAll()
    _ = try single.store(bytes(9, count: 2_048), forKey: "after removeAll", metadata: FileCacheMetadata())
    _ = try bucketed.store(bytes(10, count: 2_048), forKey: "after removeAll", metadata: FileCacheMetadata())
    report("after removeAll")

    // FileURLDecoder's temporary copy of bytes held in memory.
    let copy = try FileURLDecoder().decode(LoadedData(data: bytes(11, count: 3_000), origin: .network))
    guard copy.isTemporary, FileManager.default.fileExists(atPath: copy.url.path) else { fail("no temporary copy") }
    // A download past the threshold, without a file cache: spooled to a temporary file.
    let server = try LoopbackServer()
    server.setRoute("/large", .ok(bytes(12, count: 300_000)))
    var configuration = ObjectManager.Configuration()
    configuration.inMemoryThreshold = 64 << 10
    configuration.policy.retry = .none
    let manager = ObjectManager(configuration: configuration)
    let spooled = try await manager.object(for: ObjectRequest(url: server.url("/large")), decoder: FileURLDecoder())
    guard spooled.isTemporary, FileManager.default.fileExists(atPath: spooled.url.path) else { fail("no spooled file") }
    say("T \(copy.url.lastPathComponent) \(spooled.url.lastPathComponent)")
    report("temporary files")
    withExtendedLifetime((copy, spooled, single, bucketed, manager)) {}
    server.stop()
} catch {
    fail("\(error)")
}
say("DONE")
