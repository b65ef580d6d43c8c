import CrashPayload
import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// Two processes, one cache directory (an app and its extension). This process
/// and a child (`FileCacheCrashWriter ... share`) read, write, remove and trim the same keys of
/// the same directory at once, with the same limits. Every read on either side returns exactly
/// the bytes committed for the entry's generation, or finds the entry replaced or evicted since
/// its lookup (reported as `corrupted`, never as wrong bytes); afterwards the directory reopens
/// consistent, every entry byte-identical to its generation's payload, within the limits.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct TwoProcessTests {
    static let byteLimit = 400_000
    static let countLimit = 60
    static let childIterations = 4_000
    /// The operations this process makes at least while the child runs.
    static let parentOperations = 200

    @Test func aParentAndAChildSharingADirectoryNeverReadWrongBytesAndKeepTheLimits() async throws {
        let tally = ReliabilityTally(item: "two processes")
        for figure in ["operations", "reads", "stale reads", "wrong reads", "entries checked", "busy answers"] { tally.add(0, to: figure) }
        await withTaskGroup(of: Void.self) { group in
            for kind in CacheKind.allCases {
                group.addTask { Self.share(kind, seed: UInt64.random(in: 1...1_000_000), tally: tally) }
            }
        }
        tally.report()
        #expect(tally.figure("wrong reads") == 0)
        #expect(tally.failureCount == 0)
    }

    private static func share(_ kind: CacheKind, seed: UInt64, tally: ReliabilityTally) {
        let name = "\(kind.testDescription) (seed \(seed))"
        tally.addCase(name)
        let directory = TemporaryDirectory(prefix: "reliability-two-processes")
        let root = directory.appending("cache")
        // Created once this process has done its share of operations: the child goes on until
        // then, so the two overlap however slowly this side runs (a sanitizer, a busy machine).
        let stopFile = directory.appending("stop")
        let cache: any FileCaching
        let child: CrashWriterProcess
        do {
            cache = try kind.open(root, byteLimit: byteLimit, countLimit: countLimit)
            child = try CrashWriterProcess(arguments: [
                root.path, kind.rawValue, String(seed), "share", String(childIterations),
                "shared-", String(byteLimit), String(countLimit), stopFile.path,
            ])
        } catch {
            tally.check(false, name, "setup failed: \(error)")
            return
        }
        // Work beside the child until it is done: the same keys, the same mix of operations.
        var random = SplitMix(state: seed ^ 0xA5A5)
        var generation: UInt64 = (seed &+ 1 << 20) << 32
        var operations = 0
        var parentReads = (good: 0, stale: 0, wrong: 0)
        let deadline = Date() + waitBound
        while child.isRunning && Date() < deadline {
            if operations % 16 == 0 { child.drainAvailableOutput() }
            if operations == Self.parentOperations { _ = FileManager.default.createFile(atPath: stopFile.path, contents: nil) }
            operations += 1
            generation += 1
            let key = "shared-\(random.next() % 120)"
            switch random.next() % 1000 {
            case 0..<450:
                let bytes = CrashPayload.bytes(key: key, generation: generation)
                do {
                    try cache.store(bytes, forKey: key, metadata: FileCacheMetadata(userInfo: ["generation": String(generation)]))
                } catch FileCacheError.busy {
                    // The child held the journal lock past the wait bound (descheduled while
                    // holding it): nothing was stored. Counted, not a failure: the test is about
                    // what each side reads and keeps, not how long a lock is held.
                    tally.add(1, to: "busy answers")
                } catch {
                    tally.check(false, name, "parent store failed: \(error)")
                }
            case 450..<850:
                guard let entry = cache.entry(forKey: key) else { continue }
                do {
                    let data = try cache.readData(for: entry)
                    if let generation = CrashPayload.generation(of: entry), data == CrashPayload.bytes(key: key, generation: generation) {
                        parentReads.good += 1
                    } else {
                        parentReads.wrong += 1
                        tally.check(false, name, "the parent read wrong bytes for \(key)")
                    }
                } catch FileCacheError.corrupted {
                    parentReads.stale += 1
                } catch FileCacheError.busy {
                    tally.add(1, to: "busy answers")  // as for a store, above
                } catch {
                    tally.check(false, name, "parent read failed: \(error)")
                }
            case 850..<930:
                cache.removeEntry(forKey: key)
            default:
                cache.trim()
            }
        }
        let status = child.waitForExit()
        tally.check(status == 0, name, "the child exited with \(status.map(String.init) ?? "a timeout")")
        let childReads = child.readSummary
        tally.check(childReads != nil, name, "the child did not report its reads")
        tally.check(childReads?.wrong == 0, name, "the child read wrong bytes \(childReads?.wrong ?? -1) times")
        tally.check(
            child.commits.count > 100 && operations > 100, name,
            "too little overlap: \(child.commits.count) child commits, \(operations) parent operations")
        tally.add(operations + childIterations, to: "operations")
        tally.add(
            parentReads.good + parentReads.stale + parentReads.wrong + (childReads.map { $0.good + $0.stale + $0.wrong } ?? 0), to: "reads")
        tally.add(parentReads.stale + (childReads?.stale ?? 0), to: "stale reads")
        tally.add(parentReads.wrong + (childReads?.wrong ?? 0), to: "wrong reads")

        // Both done: the limits hold, in this instance and in a fresh one, and every entry is right.
        cache.trim()
        check(cache, name: "\(name), after both", root: root, tally: tally)
        _ = consume cache
        guard let reopened = try? kind.open(root, byteLimit: byteLimit, countLimit: countLimit) else {
            tally.check(false, name, "the shared directory does not reopen")
            return
        }
        check(reopened, name: "\(name), reopened", root: root, tally: tally)
    }

    private static func check(_ cache: any FileCaching, name: String, root: URL, tally: ReliabilityTally) {
        let entries = cache.entriesByRecency(limit: .max)
        let statistics = cache.statistics
        tally.check(
            statistics.count <= countLimit && statistics.totalBytes <= byteLimit, name,
            "over the limits: \(statistics) (limits \(countLimit) entries, \(byteLimit) bytes)")
        tally.check(statistics.count == entries.count, name, "statistics \(statistics) for \(entries.count) entries")
        for entry in entries {
            tally.add(1, to: "entries checked")
            let data = try? cache.readData(for: entry)
            let expected = CrashPayload.generation(of: entry).map { CrashPayload.bytes(key: entry.key, generation: $0) }
            tally.check(data != nil && data == expected, name, "\(entry.key) reads back wrong")
        }
        let ready = readyFiles(root)
        tally.check(
            ready == entries.map { relativePath(of: $0, in: root) }.sorted(), name,
            "ready/ holds \(ready.count) files for \(entries.count) entries")
    }
}
