import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// BigFileCache: buckets, a tenth of the cache per trim pass, limits held over many writes.
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct BigFileCacheTests {
    /// Files on disk per bucket directory.
    private func filesPerBucket(_ root: URL) -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for path in readyFiles(root) {
            let parts = path.split(separator: "/")
            if parts.count == 3, let bucket = Int(parts[1], radix: 16) { counts[bucket, default: 0] += 1 }
        }
        return counts
    }

    private func buckets(ofSlice slice: Int) -> Range<Int> {
        (slice * 256 / 10)..<((slice + 1) * 256 / 10)
    }

    @Test func entriesAreSpreadOverBucketDirectories() throws {
        try withTemporaryDirectory { root in
            let cache = try BigFileCache(directory: root)
            for index in 0..<600 {
                try cache.store(testBytes(10, seed: UInt64(index)), forKey: "k\(index)")
            }
            let files = readyFiles(root)
            #expect(files.count == 600)
            // Every file sits in the bucket its name's first byte selects; none directly in ready/.
            for path in files {
                let parts = path.split(separator: "/")
                #expect(parts.count == 3)
                #expect(parts.count == 3 && parts[2].hasPrefix(parts[1]))
            }
            #expect(filesPerBucket(root).count > 200)
        }
    }

    @Test func aTrimPassWorksOnOneTenthOfTheBuckets() throws {
        try withTemporaryDirectory { root in
            let clock = TestClock()
            let cache = try BigFileCache(directory: root, configuration: .init(maximumAge: 100), clock: clock.closure)
            for index in 0..<1000 {
                try cache.store(testBytes(20, seed: UInt64(index)), forKey: "old\(index)")
            }
            clock.advance(by: 50)
            for index in 0..<1000 {
                try cache.store(testBytes(20, seed: UInt64(index)), forKey: "new\(index)")
            }
            let onDisk = filesPerBucket(root)
            var visited = 0
            for slice in 0..<10 {
                let report = try #require(cache.trimPass())
                let range = buckets(ofSlice: slice)
                let inSlice = range.reduce(0) { $0 + onDisk[$1, default: 0] }
                #expect(report.slice == slice)
                #expect(report.bucketsVisited == range.count)
                #expect(report.entriesInSlice == inSlice)
                // Nothing has expired: a pass looks at no entry (expired ones come from the expiry
                // heap, so a pass never walks the whole slice).
                #expect(report.entriesExamined == 0)
                #expect(report.entriesRemoved == 0)
                #expect(inSlice > 100 && inSlice < 320)
                visited += report.bucketsVisited
            }
            #expect(visited == 256)

            // The old half expires. One pass deletes the expired entries of its slice only.
            clock.advance(by: 60)
            let report = try #require(cache.trimPass())
            #expect(report.slice == 0)
            let after = filesPerBucket(root)
            let range = buckets(ofSlice: 0)
            let removedInSlice = range.reduce(0) { $0 + onDisk[$1, default: 0] - after[$1, default: 0] }
            let oldInSlice = (0..<1000).filter { range.contains(FileID.makeNew(forKey: "old\($0)").bucket(of: 256)) }.count
            #expect(report.entriesRemoved == oldInSlice)
            #expect(removedInSlice == oldInSlice)
            for bucket in 0..<256 where !range.contains(bucket) {
                #expect(after[bucket, default: 0] == onDisk[bucket, default: 0])
            }
            // Expired entries outside the slice are not returned meanwhile.
            #expect(cache.entry(forKey: "old999") == nil)
            // The rest of the rotation deletes every other expired entry, each in its slice's pass
            // (the lookup of "old999" above already removed that one): the 1000 new ones remain.
            for _ in 1..<10 { _ = try #require(cache.trimPass()) }
            #expect(filesPerBucket(root).values.reduce(0, +) == 1000)
        }
    }

    @Test func anOverLimitPassEvictsItsSliceInProportion() throws {
        try withTemporaryDirectory { root in
            // One instance fills the cache; a second, with a limit, learns of it and runs one pass.
            let filler = try BigFileCache(directory: root)
            let limited = try BigFileCache(directory: root, configuration: .init(countLimit: 1000))
            // Its opening finished before the filler writes: the opening's replay runs on a thread
            // of its own and ends by enforcing the limits, so a replay that started late (on a
            // loaded machine) found the filler's entries and trimmed every slice itself.
            _ = limited.statistics
            for index in 0..<2000 {
                try filler.store(testBytes(10, seed: UInt64(index)), forKey: "k\(index)")
            }
            let onDisk = filesPerBucket(root)
            let report = try #require(limited.trimPass())
            let range = buckets(ofSlice: 0)
            let inSlice = range.reduce(0) { $0 + onDisk[$1, default: 0] }
            #expect(report.entriesInSlice == inSlice)
            // 2,000 entries for a limit of 1,000: each slice keeps 90 % × 1,000 / 2,000 of itself.
            let kept = Int((Double(inSlice) * 0.45).rounded(.down))
            #expect(report.entriesRemoved == inSlice - kept)
            let after = filesPerBucket(root)
            #expect(range.reduce(0) { $0 + after[$1, default: 0] } == kept)
            for bucket in 0..<256 where !range.contains(bucket) {
                #expect(after[bucket, default: 0] == onDisk[bucket, default: 0])
            }
            // The evicted ones were the slice's least recently used (the first written).
            let sliceKeys = (0..<2000).filter { range.contains(FileID.makeNew(forKey: "k\($0)").bucket(of: 256)) }
            for index in sliceKeys.prefix(inSlice - kept) { #expect(limited.entry(forKey: "k\(index)") == nil) }
            for index in sliceKeys.suffix(kept) { #expect(limited.entry(forKey: "k\(index)") != nil) }
        }
    }

    @Test func staysWithinItsLimitsOverManyWrites() throws {
        try withTemporaryDirectory { root in
            let cache = try BigFileCache(directory: root, configuration: .init(byteLimit: 600_000, countLimit: 300))
            var generator = SplitMix(state: 11)
            var overLimit = 0
            for index in 0..<5000 {
                let size = Int(generator.next() % 4000)
                try cache.store(testBytes(size, seed: UInt64(index)), forKey: "k\(generator.next() % 3000)")
                let statistics = cache.statistics
                if statistics.count > 300 || statistics.totalBytes > 600_000 { overLimit += 1 }
            }
            #expect(overLimit == 0)
            #expect(cache.statistics.count > 150)
            try expectConsistent(cache, root: root)
        }
    }

    /// The pass a commit starts deletes what the limit needs plus a bounded headroom, not its
    /// slice's whole share (a tenth of the excess: ten thousand files at a million entries), so
    /// no commit waits for a whole pass; the commits after it find room and delete nothing.
    @Test func aCommitOverTheLimitDeletesABoundedHeadroomNotAWholePass() throws {
        try withTemporaryDirectory { root in
            let limit = 7_000
            let cache = try BigFileCache(directory: root, configuration: .init(countLimit: limit))
            for index in 0..<limit { try cache.store(testBytes(10, seed: UInt64(index)), forKey: "k\(index)") }
            #expect(cache.statistics.count == limit)
            // One past the limit: each slice holds about 700 entries, and a whole pass would keep
            // 90 % of its slice (about 70 deleted); the commit deletes 64.
            try cache.store(testBytes(10, seed: 0), forKey: "over")
            #expect(cache.statistics.count == limit + 1 - StoreState.headroomPerCommit)
            for index in 0..<(StoreState.headroomPerCommit - 1) {
                try cache.store(testBytes(10, seed: UInt64(index)), forKey: "more\(index)")
            }
            #expect(cache.statistics.count == limit, "the headroom took the next commits without a deletion")
            #expect(cache.entry(forKey: "over") != nil)
            try expectConsistent(cache, root: root)
        }
    }

    /// A limit lowered since the cache was last used, by more than a step: the opening evicts
    /// one step of the excess under the lock, not all of it (every call would wait for it); a
    /// thread works the rest off in steps of `excessStepSize` entries, a commit meanwhile evicts
    /// about what it adds, and the limit is reached. (A smaller excess is evicted at the opening
    /// whole: `smallerLimitsAreEnforcedAtOpen`.)
    @Test(arguments: CacheKind.allCases)
    func aLimitLoweredSinceTheLastUseIsReachedInSteps(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                for index in 0..<3_000 {
                    try cache.store(testBytes(64, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
            }
            let cache = try kind.open(root, countLimit: 2_000, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            let job = try #require(store.state.withLock { $0.opening })
            let paused = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            job.pause(at: .beforeWorkingOffExcess) {
                paused.signal()
                // Bounded: a test that stopped before releasing it must not hold the thread forever.
                _ = release.wait(timeout: .now() + 60)
            }
            #expect(cache.statistics.count == 3_000 - StoreState.excessStepSize, "the opening evicted more than a step under the lock")
            #expect(paused.wait(timeout: .now() + 20) == .success, "no thread works the excess off")
            let step = store.state.withLock { state -> (evicted: Int, more: Bool)? in
                let before = state.index.count
                guard (try? state._lockJournal()) != nil else { return nil }
                defer { state._unlockJournal() }
                let more = state._stepTowardConfiguredLimits(now: Date().timeIntervalSinceReferenceDate)
                return (before - state.index.count, more)
            }
            let (evicted, more) = try #require(step)
            #expect(evicted == StoreState.excessStepSize)
            #expect(more)
            let beforeCommit = cache.statistics.count
            try cache.store(testBytes(64, seed: 1), forKey: "new", metadata: FileCacheMetadata())
            #expect(cache.statistics.count >= beforeCommit - StoreState.headroomPerCommit, "the commit evicted the excess")
            release.signal()
            store.finishOpeningAndItsDeletions()
            #expect(cache.statistics.count <= 2_000)
            #expect(store.state.withLock { !$0._isWorkingOffExcess })
            #expect(cache.entry(forKey: "new") != nil)
            #expect(cache.entry(forKey: "k2999") != nil)
            if kind == .single { #expect(cache.entry(forKey: "k0") == nil, "not the least recently used first") }
            try expectConsistent(cache, root: root)
        }
    }

    @Test func trimStateBelongsToTheInstance() throws {
        try withTemporaryDirectory { root in
            let first = try BigFileCache(directory: root.appendingPathComponent("one"))
            let second = try BigFileCache(directory: root.appendingPathComponent("two"))
            #expect(first.trimPass()?.slice == 0)
            #expect(first.trimPass()?.slice == 1)
            #expect(second.trimPass()?.slice == 0)
            let third = try BigFileCache(directory: root.appendingPathComponent("one"))
            #expect(third.trimPass()?.slice == 0)
            #expect(first.trimPass()?.slice == 2)
        }
    }

    @Test func aFileCacheRefusesABigFileCacheDirectory() throws {
        try withTemporaryDirectory { root in
            do { _ = try BigFileCache(directory: root) }
            #expect(throws: FileCacheError.self) { try FileCache(directory: root) }
            #expect(throws: Never.self) { try BigFileCache(directory: root) }
        }
    }
}
