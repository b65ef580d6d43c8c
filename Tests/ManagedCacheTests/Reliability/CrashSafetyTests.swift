import CrashPayload
import Foundation
import TestSupport
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process writing to a file cache (streamed writes, commits, aborts,
/// abandoned writers, reads, removals, metadata updates, trims, removeAll) is killed with SIGKILL
/// at random moments, again and again on the same directory. After every kill the cache reopens
/// and: every entry reads back byte-identical to what was committed under its key (the payload of
/// its generation), no entry is an older version of a key than the last one committed (nothing
/// resurrected), at most one entry per run is a commit the child did not live to report (the one
/// under way at the kill), nothing partial is visible, no orphan file is left in `ready/` or
/// `loading/`, and the limits hold. The child also pins (at commit and by key) and unpins: every
/// pin it reported is still in force, at that generation or a later one, with its bytes intact;
/// no key it reported unpinned or removed comes back pinned; the pinned quota holds
/// (`PinLedger`).
///
/// `FileCacheCrashTests` does this a dozen times per cache type; this is the reliability suite's scale and
/// figure.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct CrashSafetyTests {
    /// Kills per cache type: 50 (100 in all), or `MANAGEDCACHE_CRASH_RUNS_PER_KIND` (at least 25,
    /// so that a run still kills at least 50 times). `.ci/run` sets 25 for the AddressSanitizer
    /// run, where each instrumented child is several times slower; the plain run keeps 50.
    static let runsPerKind =
        ProcessInfo.processInfo.environment["MANAGEDCACHE_CRASH_RUNS_PER_KIND"]
        .flatMap(Int.init).map { max(25, $0) } ?? 50

    /// The limits the crash writer opens its caches with (see Tests/FileCacheCrashWriter).
    static func limits(_ kind: CacheKind) -> (bytes: Int, count: Int) {
        kind == .single ? (1 << 20, 150) : (3 << 20, 400)
    }

    @Test func reopeningAfterSIGKILLAtRandomMomentsNeverShowsACorruptPartialOrOrphanedEntry() async throws {
        let tally = ReliabilityTally(item: "crash safety")
        let seed = UInt64.random(in: 1...1_000_000)
        for figure in ["kills", "kills during open", "commits reported", "entries checked", "corrupt entries", "pins checked"] {
            tally.add(0, to: figure)
        }
        await withTaskGroup(of: Void.self) { group in
            for kind in CacheKind.allCases {
                group.addTask { Self.crashRepeatedly(kind, seed: seed &+ (kind == .single ? 0 : 1 << 20), tally: tally) }
            }
        }
        tally.report()
        print("reliability: crash safety: seed \(seed); rerun a failure with that seed in crashRepeatedly")
        #expect(tally.caseCount == 2 * Self.runsPerKind)
        #expect(tally.figure("corrupt entries") == 0)
        #expect(tally.figure("entries checked") > 0)
        #expect(tally.figure("pins checked") > 0)
        #expect(tally.failureCount == 0)
    }

    private static func crashRepeatedly(_ kind: CacheKind, seed: UInt64, tally: ReliabilityTally) {
        let directory = TemporaryDirectory(prefix: "reliability-crash-\(kind.rawValue)")
        let root = directory.url.appendingPathComponent("cache")
        var generator = SplitMix(state: seed)
        /// The highest generation reported committed, per key (over all runs: generations only grow).
        var lastReported: [String: UInt64] = [:]
        var reported = Set<UInt64>()
        var pins = PinLedger()
        for run in 0..<runsPerKind {
            let name = "\(kind.testDescription) run \(run) (seed \(seed))"
            tally.addCase(name)
            let runSeed = seed &+ UInt64(run)
            let child: CrashWriterProcess
            do {
                child = try CrashWriterProcess(arguments: [root.path, kind.rawValue, String(runSeed), "crash"])
            } catch {
                tally.check(false, name, "cannot launch the crash writer: \(error)")
                return
            }
            // Kill right after launch (possibly during the open or its recovery), or after a random
            // number of commits plus a random few milliseconds (mid-write, mid-commit, mid-trim...).
            let target = Int(generator.next() % 170) - 20
            if target >= 0 {
                let reached = child.read { $0.opened && $0.commits.count >= target }
                guard tally.check(reached, name, "the child stopped before \(target) commits") else {
                    _ = child.kill()
                    return  // a child that stalls would stall every run: stop here
                }
                usleep(UInt32(generator.next() % 4_000))
            } else {
                tally.add(1, to: "kills during open")
            }
            tally.check(child.kill(), name, "the child exited by itself instead of being killed")
            tally.add(1, to: "kills")
            child.read(timeout: 10) { _ in false }  // what it reported before dying, up to end of output
            let runMaximum = child.commits.map(\.generation).max() ?? 0
            for commit in child.commits {
                reported.insert(commit.generation)
                lastReported[commit.key] = max(lastReported[commit.key] ?? 0, commit.generation)
            }
            tally.add(child.commits.count, to: "commits reported")
            pins.apply(child.pinReports)

            let cache: any FileCaching
            do {
                // With the child's limits: a kill between a commit and its evictions leaves one
                // entry too many on disk, which the next open with limits evicts.
                let limits = Self.limits(kind)
                cache = try kind.open(root, byteLimit: limits.bytes, countLimit: limits.count)
            } catch {
                tally.check(false, name, "reopening failed: \(error)")
                continue
            }
            let entries = cache.entriesByRecency(limit: .max)
            var unreportedThisRun = 0
            var accepted: [(key: String, generation: UInt64)] = []
            for entry in entries {
                tally.add(1, to: "entries checked")
                guard let generation = CrashPayload.generation(of: entry) else {
                    tally.add(1, to: "corrupt entries")
                    tally.check(false, name, "\(entry.key) has no generation in its metadata")
                    continue
                }
                let expected = CrashPayload.bytes(key: entry.key, generation: generation)
                let data = try? cache.readData(for: entry)
                if data != expected || entry.byteCount != expected.count {
                    tally.add(1, to: "corrupt entries")
                    tally.check(
                        false, name,
                        "\(entry.key) generation \(generation): \(data.map { "\($0.count) wrong bytes" } ?? "unreadable"), expected \(expected.count)"
                    )
                }
                tally.check(
                    generation >= lastReported[entry.key] ?? 0, name,
                    "\(entry.key) went back to generation \(generation) after \(lastReported[entry.key] ?? 0) was committed")
                if !reported.contains(generation) {
                    // Only the commit under way when the child died can be unreported, and it is this run's newest.
                    let fromThisRun = generation >> 32 == runSeed
                    tally.check(
                        fromThisRun && generation > runMaximum, name,
                        "\(entry.key) holds generation \(generation), never reported and not this run's last commit")
                    if fromThisRun { unreportedThisRun += 1 }
                    accepted.append((entry.key, generation))
                }
            }
            // A commit that made it to disk unreported is a commit: later runs must keep it or newer.
            for (key, generation) in accepted {
                reported.insert(generation)
                lastReported[key] = max(lastReported[key] ?? 0, generation)
            }
            tally.check(unreportedThisRun <= 1, name, "\(unreportedThisRun) unreported commits")

            // Nothing partial, no orphan, consistent figures, limits.
            let statistics = cache.statistics
            tally.check(
                statistics.count == entries.count && statistics.totalBytes == entries.reduce(0) { $0 + $1.byteCount },
                name, "statistics \(statistics) disagree with the \(entries.count) entries")
            tally.check(Set(entries.map(\.key)).count == entries.count, name, "a key has two entries")
            let ready = readyFiles(root)
            let indexed = entries.map { relativePath(of: $0, in: root) }.sorted()
            tally.check(
                ready == indexed, name,
                "ready/ holds \(Set(ready).subtracting(indexed).count) orphans, misses \(Set(indexed).subtracting(ready).count) files")
            tally.check(loadingFiles(root).isEmpty, name, "loading/ still holds \(loadingFiles(root))")
            let known: Set<String> = ["journal", "journal.lookup", "lock", "session.lock", "sessions", "partial", "loading", "ready"]
            let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).filter { !known.contains($0) }
            tally.check(leftovers.isEmpty, name, "left in the root: \(leftovers)")
            let limits = Self.limits(kind)
            tally.check(
                statistics.count - statistics.pinnedCount <= limits.count && statistics.totalBytes - statistics.pinnedBytes <= limits.bytes,
                name, "over the limits after reopening: \(statistics)")
            tally.add(pins.pinned.count, to: "pins checked")
            for problem in pins.check(cache, quota: CrashPayload.pinnedQuota(big: kind == .big)) {
                tally.check(false, name, problem)
            }
        }
    }
}
