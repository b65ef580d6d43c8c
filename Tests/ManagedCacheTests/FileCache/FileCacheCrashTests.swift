import CrashPayload
import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// A process killed (SIGKILL) at random moments while it writes, reads, removes and trims leaves
/// a cache that reopens consistent: every entry reads back exactly what was committed under its
/// key, nothing partial is visible, and no orphan file remains in ready/ or loading/. The pins it
/// reported are in force, those it undid are not, and the pinned quota holds (`PinLedger`).
@Suite(.offCooperativePool, .spawnsChildProcesses) struct FileCacheCrashTests {
    static let runs = 12

    @Test(arguments: CacheKind.allCases)
    func reopeningAfterAKillGivesAConsistentCache(kind: CacheKind) throws {
        try kills(kind: kind, runs: Self.runs, prefilled: 0)
    }

    /// The same kills over a `BigFileCache` that holds a million entries besides the writer's
    /// (which then never removes all).
    /// Minutes: only with `MANAGEDCACHE_MILLION` set (outside CI); a number above 1 there is the
    /// count of entries instead of a million.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MANAGEDCACHE_MILLION"] != nil))
    func reopeningAfterAKillGivesAConsistentCacheOfAMillionEntries() throws {
        let asked = ProcessInfo.processInfo.environment["MANAGEDCACHE_MILLION"].flatMap { Int($0) } ?? 1
        try kills(kind: .big, runs: 3, prefilled: asked > 1 ? asked : 1_000_000)
    }

    /// What a prefilled entry holds.
    private static func prefill(_ index: Int) -> (key: String, bytes: Data) {
        let key = "prefill-\(index)"
        return (key, Data(key.utf8))
    }

    /// `runs` kills of a writer over a cache of `kind` holding `prefilled` entries of its own
    /// (`prefill`), each followed by a reopening that checks every entry.
    private func kills(kind: CacheKind, runs: Int, prefilled: Int) throws {
        try withTemporaryDirectory { root in
            if prefilled > 0 {
                let cache = try kind.open(root)
                for index in 0..<prefilled {
                    let (key, bytes) = Self.prefill(index)
                    try cache.store(bytes, forKey: key, metadata: FileCacheMetadata())
                }
                #expect(cache.statistics.count == prefilled)
            }
            let seed = UInt64.random(in: 1...1_000_000)
            var generator = SplitMix(state: seed)
            var killedWhileRunning = 0
            var commitsSeen = 0
            var entriesChecked = 0
            var pins = PinLedger()
            var pinsChecked = 0
            for run in 0..<runs {
                // In odd runs this process has the cache open too, so the child is not alone and
                // the survivor has to cope with whatever the kill left (a torn journal tail).
                var bystander: (any FileCaching)? = run % 2 == 1 ? try kind.open(root) : nil
                let child = try CrashWriterProcess(
                    arguments: [root.path, kind.rawValue, String(seed &+ UInt64(run)), "crash", String(prefilled)])
                // Kill right after launch (possibly during the open), or after a random number of commits.
                let target = Int(generator.next() % 160) - 10
                if target >= 0 {
                    let reached = child.read { $0.opened && $0.commits.count >= target }
                    #expect(reached, "seed \(seed) run \(run): the child stopped early")
                }
                if child.kill() { killedWhileRunning += 1 }
                child.read(timeout: 10) { _ in false }  // what it reported before dying, up to end of output
                commitsSeen += child.commits.count
                pins.apply(child.pinReports)
                if let survivor = bystander {
                    for index in 0..<20 {
                        let key = "key-\(index)"
                        if let entry = survivor.entry(forKey: key), let generation = CrashPayload.generation(of: entry),
                            let data = try? survivor.readData(for: entry)
                        {
                            #expect(data == CrashPayload.bytes(key: key, generation: generation), "seed \(seed) run \(run)")
                        }
                    }
                    let generation = UInt64(run) << 40
                    try survivor.store(
                        CrashPayload.bytes(key: "survivor", generation: generation), forKey: "survivor",
                        metadata: FileCacheMetadata(userInfo: ["generation": String(generation)]))
                    bystander = nil
                }

                let cache = try kind.open(root)
                let entries = try expectConsistent(cache, root: root)
                var prefilledFound = 0
                for entry in entries {
                    if entry.key.hasPrefix("prefill-") {
                        prefilledFound += 1
                        #expect(try cache.readData(for: entry) == Data(entry.key.utf8), "seed \(seed) run \(run): \(entry.key)")
                        continue
                    }
                    let generation = try #require(CrashPayload.generation(of: entry))
                    #expect(
                        try cache.readData(for: entry) == CrashPayload.bytes(key: entry.key, generation: generation),
                        "seed \(seed) run \(run): \(entry.key)")
                }
                #expect(prefilledFound == prefilled, "seed \(seed) run \(run): every prefilled entry stays")
                entriesChecked += entries.count
                pinsChecked += pins.pinned.count
                for problem in pins.check(cache, quota: CrashPayload.pinnedQuota(big: kind == .big)) {
                    Issue.record("seed \(seed) run \(run): \(problem)")
                }
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: root.path)
                    .filter { !["journal", "journal.lookup", "lock", "session.lock", "sessions", "loading", "ready"].contains($0) }
                #expect(leftovers.isEmpty, "seed \(seed) run \(run)")
            }
            #expect(killedWhileRunning == runs, "seed \(seed): a child exited by itself")
            #expect(commitsSeen > 0)
            print(
                "crash test \(kind.testDescription): seed \(seed), \(runs) kills, \(commitsSeen) commits reported, \(entriesChecked) entries checked, \(pinsChecked) pins checked"
            )
        }
    }
}
