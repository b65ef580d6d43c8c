import CrashPayload
import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Read outcomes counted across tasks.
private final class ReadCounts: Sendable {
    let good = Lock<Int>(0)
    let wrong = Lock<Int>(0)
    let stale = Lock<Int>(0)
}

/// Several instances on one directory, in one process or in several, do not corrupt each other.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct FileCacheSharingTests {
    @Test(arguments: CacheKind.allCases)
    func anEntryWrittenByAnotherInstanceIsFoundOnAMiss(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let first = try kind.open(root)
            let second = try kind.open(root)
            try first.store(Data("shared".utf8), forKey: "x", metadata: FileCacheMetadata())
            let seen = try #require(second.entry(forKey: "x"))
            #expect(try second.readData(for: seen) == Data("shared".utf8))
            second.removeEntry(forKey: "x")
            // first still lists it until it next consults the journal; a read finds it gone.
            if let stale = first.entry(forKey: "x") {
                #expect(throws: FileCacheError.corrupted(key: "x")) { try first.readData(for: stale) }
            }
            try second.store(Data("again".utf8), forKey: "y", metadata: FileCacheMetadata())
            first.trim()
            #expect(first.statistics == second.statistics)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func twoInstancesWritingAndReadingConcurrentlyStayConsistent(kind: CacheKind) async throws {
        try await withTemporaryDirectory { root in
            let first = try kind.open(root, countLimit: 100)
            let second = try kind.open(root, countLimit: 100)
            let counts = ReadCounts()
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    let cache = worker % 2 == 0 ? first : second
                    group.addTask {
                        var generator = SplitMix(state: UInt64(worker + 1))
                        for step in 0..<250 {
                            let key = "k\(generator.next() % 120)"
                            if generator.next() % 2 == 0 {
                                let generation = UInt64(worker) << 32 | UInt64(step)
                                _ = try? cache.store(
                                    CrashPayload.bytes(key: key, generation: generation), forKey: key,
                                    metadata: FileCacheMetadata(userInfo: ["generation": String(generation)]))
                            } else if let entry = cache.entry(forKey: key) {
                                do {
                                    let data = try cache.readData(for: entry)
                                    let expected = CrashPayload.generation(of: entry).map { CrashPayload.bytes(key: key, generation: $0) }
                                    if data == expected { counts.good.withLock { $0 += 1 } } else { counts.wrong.withLock { $0 += 1 } }
                                } catch FileCacheError.corrupted {
                                    // Replaced or evicted by the other instance since the lookup.
                                    counts.stale.withLock { $0 += 1 }
                                } catch {
                                    counts.wrong.withLock { $0 += 1 }
                                }
                            }
                        }
                    }
                }
            }
            #expect(counts.wrong.withLock { $0 } == 0)
            #expect(counts.good.withLock { $0 } > 100)
            first.trim()
            second.trim()
            #expect(Set(first.entriesByRecency(limit: .max).map(\.key)) == Set(second.entriesByRecency(limit: .max).map(\.key)))
            try checkPayloads(first, root: root)
            print("two instances \(kind.testDescription): \(counts.good.withLock { $0 }) good reads, \(counts.stale.withLock { $0 }) stale")
        }
    }

    @Test(arguments: CacheKind.allCases)
    func twoProcessesAndThisOneSharingADirectoryStayConsistent(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let children = try (1...2).map { index in
                try CrashWriterProcess(arguments: [root.path, kind.rawValue, "\(index)", "steady", "400", "shared-"])
            }
            // Work alongside the children until both have finished.
            var generator = SplitMix(state: 3)
            var step: UInt64 = 0
            let deadline = Date() + 60
            while children.contains(where: \.isRunning) && Date() < deadline {
                step += 1
                let key = "shared-\(generator.next() % 120)"
                if step % 2 == 0 {
                    do {
                        try cache.store(
                            CrashPayload.bytes(key: key, generation: step), forKey: key,
                            metadata: FileCacheMetadata(userInfo: ["generation": String(step)]))
                    } catch FileCacheError.busy {
                        // A child held the journal lock past the wait bound (descheduled while
                        // holding it, under a sanitizer): nothing was stored. Consistency is
                        // what this test checks, not how long a lock is held.
                    }
                } else if let entry = cache.entry(forKey: key) {
                    do {
                        let data = try cache.readData(for: entry)
                        let generation = try #require(CrashPayload.generation(of: entry))
                        #expect(data == CrashPayload.bytes(key: key, generation: generation))
                    } catch FileCacheError.corrupted {
                        // Replaced or evicted by a child since the lookup.
                    } catch FileCacheError.busy {
                        // As for a store, above.
                    }
                }
            }
            for child in children {
                #expect(child.waitForExit() == 0)
                #expect(child.commits.count > 100)
            }
            cache.trim()
            try checkPayloads(cache, root: root)
            _ = consume cache
            let reopened = try kind.open(root)
            try checkPayloads(reopened, root: root)
        }
    }

    private func checkPayloads(_ cache: any FileCaching, root: URL) throws {
        for entry in try expectConsistent(cache, root: root) {
            let generation = try #require(CrashPayload.generation(of: entry))
            #expect(try cache.readData(for: entry) == CrashPayload.bytes(key: entry.key, generation: generation))
        }
    }
}
