// A child process for the file-cache crash tests.
//
//     FileCacheCrashWriter <root> <single|big> <seed> crash
//     FileCacheCrashWriter <root> <single|big> <seed> steady <iterations> <key prefix>
//     FileCacheCrashWriter <root> <single|big> <seed> share <iterations> <key prefix> <byte limit> <count limit> [<stop file>]
//     FileCacheCrashWriter <root> <single|big> <seed> stop <between|inside> <key prefix>
//
// `crash` mode runs every kind of operation on the cache at <root> in a loop until the parent
// kills it (SIGKILL). `steady` mode runs <iterations> operations on keys starting with
// <key prefix> and exits 0 (two processes sharing one directory). `share` mode is `steady` with
// the given limits and more reads and trims; it checks every read instead of stopping at the
// first wrong one, and ends with "S <good> <stale> <wrong>" (reads that matched, reads of an
// entry another process had replaced or evicted since the lookup, reads that returned wrong
// bytes), exiting 4 if any read was wrong. Given a stop file, `share` goes on past <iterations>
// until that file exists (60 s at most), so that the parent, however slow, overlaps it.
//
// Every committed entry's bytes are `CrashPayload.bytes(key, generation)` (the `CrashPayload`
// target, shared with the tests), with the generation in the entry's metadata, so the parent can
// check each entry it finds without knowing what happened. After each commit the child prints
// "C <key> <generation> <crc32 of the bytes>", so the parent can also check that what the child
// wrote is what it computes. "O" means the cache is open.
//
// `crash` mode also pins: some commits are pinned ("C <key> <generation> <crc32> P"), and entries
// are pinned ("P <key> <generation>") and unpinned ("U <key>") by key. Before every operation that
// can change a key's pin (a pinned commit, a pin, an unpin, a removal) the child prints
// "I <key>" ("I *" before `removeAll`), and after it one line saying what it did: the commit or
// pin line, "U", "R <key>" (removed), "A" (removed all), "Q <key>" (refused: over the pinned
// quota) or "N <key>" (nothing to pin). So the parent knows every pin in force, and which one key
// an operation under way at the kill may have changed.
//
// `stop` mode stores 20 entries, then stops itself (SIGSTOP) between two operations ("B" first)
// or, once the file `<root>.go` exists ("R" first: the parent creates it), inside the commit of
// `<prefix>stopped`, with the journal lock held ("W" first). Once
// continued it finishes that commit, reads back what the parent wrote meanwhile (`parent-0` …
// while they are there), writes and removes more, and ends with "D" and exit 0.

import CrashPayload
import Foundation
import ManagedCache
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 5 else {
    FileHandle.standardError.write(Data("usage: FileCacheCrashWriter root single|big seed crash|steady [iterations prefix]\n".utf8))
    exit(2)
}
let root = URL(fileURLWithPath: arguments[1])
let big = arguments[2] == "big"
var random = SplitMix64(state: UInt64(arguments[3]) ?? 1)
let share = arguments[4] == "share"
let steady = arguments[4] == "steady" || share
let iterations = steady ? Int(arguments[5]) ?? 100 : Int.max
let prefix = steady ? arguments[6] : "key-"
let shareLimits = share && arguments.count >= 9 ? (bytes: Int(arguments[7]), count: Int(arguments[8])) : nil
let shareStopFile = share && arguments.count >= 10 ? arguments[9] : nil

let stopMode = arguments[4] == "stop"
/// In crash mode, how many entries the test stored before (`prefill-<n>`, at most 64 bytes
/// each): the limits leave room for them, so the kills happen over a cache of that size.
let prefilled = arguments[4] == "crash" && arguments.count >= 6 ? Int(arguments[5]) ?? 0 : 0

let cache: any FileCaching
do {
    if stopMode {
        cache = big ? try BigFileCache(directory: root) : try FileCache(directory: root)
    } else if let shareLimits {
        cache =
            big
            ? try BigFileCache(directory: root, configuration: .init(byteLimit: shareLimits.bytes, countLimit: shareLimits.count))
            : try FileCache(directory: root, configuration: .init(byteLimit: shareLimits.bytes, countLimit: shareLimits.count))
    } else if big {
        cache = try BigFileCache(
            directory: root,
            configuration: .init(
                byteLimit: (3 << 20) + prefilled * 64, countLimit: 400 + prefilled, pinnedByteLimit: CrashPayload.pinnedQuota(big: true)))
    } else {
        cache = try FileCache(
            directory: root,
            configuration: .init(byteLimit: 1 << 20, countLimit: 150, pinnedByteLimit: CrashPayload.pinnedQuota(big: false)))
    }
} catch {
    FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
    exit(3)
}
say("O")

var generation = (UInt64(arguments[3]) ?? 1) << 32
var reads = (good: 0, stale: 0, wrong: 0)

/// Operations answered `busy` (steady and share modes): another process held the journal lock
/// past the cache's wait bound (1 s), which happens when a process sharing the directory is
/// descheduled while it holds it (sanitizer builds, a loaded machine). A `busy` operation did
/// nothing, so it is skipped. Past `maximumBusy` the lock counts as stuck and the child fails.
var busyAnswers = 0
let maximumBusy = 100

/// Counts a `busy` answer for `operation`; exits 5 past `maximumBusy`.
@MainActor
func skipBusy(_ operation: String) {
    busyAnswers += 1
    guard busyAnswers > maximumBusy else { return }
    FileHandle.standardError.write(Data("operation failed: busy (\(operation)), \(busyAnswers) times\n".utf8))
    exit(5)
}

/// `share` mode: reads, writes, removals and trims of keys other processes use at the same time.
@MainActor
func shareStep(_ key: String, _ choice: UInt64) throws {
    switch choice {
    case 0..<450:
        let bytes = CrashPayload.bytes(key: key, generation: generation)
        let writer = try cache.makeWriter(forKey: key)
        let middle = bytes.count / 2
        try writer.write(bytes.prefix(middle))
        try writer.write(bytes.suffix(from: middle))
        try writer.commit(metadata: FileCacheMetadata(userInfo: ["generation": String(generation)]))
        say("C \(key) \(generation) \(CRC32.checksum(bytes))")
    case 450..<850:
        guard let entry = cache.entry(forKey: key) else { return }
        do {
            let data = try cache.readData(for: entry)
            let stored = UInt64(entry.metadata.userInfo["generation"] ?? "") ?? 0
            if data == CrashPayload.bytes(key: key, generation: stored) {
                reads.good += 1
            } else {
                reads.wrong += 1
                FileHandle.standardError.write(Data("read back wrong bytes for \(key)\n".utf8))
            }
        } catch FileCacheError.corrupted {
            reads.stale += 1  // replaced or evicted by the other process since the lookup
        }
    case 850..<930:
        cache.removeEntry(forKey: key)
    default:
        cache.trim()
    }
}

if stopMode, arguments.count >= 7, let journaled = cache as? JournaledFileCache {
    let prefix = arguments[6]
    func commit(_ key: String) throws {
        generation += 1
        let bytes = CrashPayload.bytes(key: key, generation: generation)
        try cache.store(bytes, forKey: key, metadata: FileCacheMetadata(userInfo: ["generation": String(generation)]))
        say("C \(key) \(generation) \(CRC32.checksum(bytes))")
    }
    do {
        for index in 0..<20 { try commit(prefix + String(index)) }
        if arguments[5] == "inside" {
            // Stopped only once the parent has caught up with the 20 entries: it creates <root>.go.
            say("R")
            while access(root.path + ".go", F_OK) != 0 { usleep(2_000) }
            let once = Lock(true)
            journaled.setHookInsideCommit {
                let first = once.withLock { pending in
                    defer { pending = false }
                    return pending
                }
                if first { raise(SIGSTOP) }
            }
            say("W")
            try commit(prefix + "stopped")
            journaled.setHookInsideCommit(nil)
        } else {
            say("B")
            raise(SIGSTOP)
        }
        // Continued: what the parent wrote meanwhile is there and intact.
        for index in 0..<20 {
            guard let entry = cache.entry(forKey: "parent-\(index)") else { continue }
            let stored = UInt64(entry.metadata.userInfo["generation"] ?? "") ?? 0
            guard try cache.readData(for: entry) == CrashPayload.bytes(key: entry.key, generation: stored) else {
                FileHandle.standardError.write(Data("read back wrong bytes for \(entry.key)\n".utf8))
                exit(4)
            }
        }
        for index in 20..<30 { try commit(prefix + String(index)) }
        cache.removeEntry(forKey: prefix + "0")
        guard cache.entry(forKey: prefix + "0") == nil, cache.entry(forKey: prefix + "29") != nil else { exit(6) }
    } catch {
        FileHandle.standardError.write(Data("operation failed: \(error)\n".utf8))
        exit(5)
    }
    say("D")
    exit(0)
}

if share {
    let stopDeadline = Date() + 60
    /// Whether to go on past the iterations: the parent has not created the stop file yet.
    func waitsForTheParent() -> Bool {
        guard let shareStopFile, Date() < stopDeadline else { return false }
        return !FileManager.default.fileExists(atPath: shareStopFile)
    }
    var done = 0
    while done < iterations || waitsForTheParent() {
        done += 1
        let key = prefix + String(random.next() % 120)
        generation += 1
        do {
            try shareStep(key, random.next() % 1000)
        } catch FileCacheError.busy(let operation) {
            skipBusy(operation)
        } catch {
            FileHandle.standardError.write(Data("operation failed: \(error)\n".utf8))
            exit(5)
        }
    }
    if busyAnswers > 0 { FileHandle.standardError.write(Data("busy answers skipped: \(busyAnswers)\n".utf8)) }
    say("S \(reads.good) \(reads.stale) \(reads.wrong)")
    exit(reads.wrong == 0 ? 0 : 4)
}

for _ in 0..<iterations {
    let key = prefix + String(random.next() % (steady ? 120 : 300))
    let choice = random.next() % 1000
    generation += 1
    do {
        switch choice {
        case 0..<600:
            // Stream the payload in up to four chunks, then commit; in crash mode one in five pinned.
            let bytes = CrashPayload.bytes(key: key, generation: generation)
            let pinning = !steady && random.next() % 5 == 0
            if pinning { say("I \(key)") }
            let writer = try cache.makeWriter(forKey: key, pinned: pinning)
            var offset = 0
            let pieces = Int(random.next() % 4) + 1
            for piece in 0..<pieces {
                let end = piece == pieces - 1 ? bytes.count : min(bytes.count, offset + bytes.count / pieces)
                try writer.write(bytes.subdata(in: offset..<end))
                offset = end
            }
            do {
                try writer.commit(
                    metadata: FileCacheMetadata(contentType: "application/test", userInfo: ["generation": String(generation)]))
                say("C \(key) \(generation) \(CRC32.checksum(bytes))" + (pinning ? " P" : ""))
            } catch FileCacheError.pinnedQuotaExceeded {
                // Pinned, or a new version of a pinned key, past the quota: the previous version stays.
                say("Q \(key)")
            }
        case 600..<680:
            // Write part of an entry, then abort.
            let writer = try cache.makeWriter(forKey: key)
            try writer.write(CrashPayload.bytes(key: key, generation: generation).prefix(1000))
            writer.abort()
        case 680..<720:
            // Write part of an entry and drop the writer without committing or aborting.
            let writer = try cache.makeWriter(forKey: key)
            try writer.write(Data(repeating: 0xEE, count: 3000))
        case 720..<760 where !steady:
            say("I \(key)")
            do {
                let entry = try cache.pin(forKey: key)
                say("P \(key) \(entry.metadata.userInfo["generation"] ?? "0")")
            } catch FileCacheError.pinnedQuotaExceeded {
                say("Q \(key)")
            } catch FileCacheError.noEntry {
                say("N \(key)")
            }
        case 760..<790 where !steady:
            say("I \(key)")
            try cache.unpin(forKey: key)
            say("U \(key)")
        case 720..<880:
            // Read an entry back and check it.
            if let entry = cache.entry(forKey: key) {
                let data = try cache.readData(for: entry)
                let stored = UInt64(entry.metadata.userInfo["generation"] ?? "") ?? 0
                if data != CrashPayload.bytes(key: key, generation: stored) {
                    FileHandle.standardError.write(Data("read back wrong bytes for \(key)\n".utf8))
                    exit(4)
                }
            }
        case 880..<950:
            if !steady { say("I \(key)") }
            cache.removeEntry(forKey: key)
            if !steady { say("R \(key)") }
        case 950..<980:
            // updateMetadata is by key: with other processes replacing entries (steady mode) it
            // could attach this version's generation to another version's bytes, so only here.
            if !steady, var metadata = cache.entry(forKey: key)?.metadata {
                metadata.etag = "\"\(generation)\""
                try cache.updateMetadata(metadata, forKey: key)
            }
        case 980..<997:
            cache.trim()
        default:
            // Not over a prefilled cache: what the kills are tested over stays.
            if !steady && prefilled == 0 {
                say("I *")
                cache.removeAll()
                say("A")
            }
        }
    } catch FileCacheError.corrupted {
        // Another process (steady mode) replaced or removed the entry between lookup and read.
    } catch FileCacheError.busy(let operation) where steady {
        skipBusy(operation)
    } catch {
        FileHandle.standardError.write(Data("operation failed: \(error)\n".utf8))
        exit(5)
    }
}
if busyAnswers > 0 { FileHandle.standardError.write(Data("busy answers skipped: \(busyAnswers)\n".utf8)) }
say("D")
exit(0)
