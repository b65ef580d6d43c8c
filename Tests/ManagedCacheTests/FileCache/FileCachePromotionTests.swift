import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Nothing is visible in a cache until a writer commits; everything else leaves nothing behind.
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCachePromotionTests {
    @Test(arguments: CacheKind.allCases)
    func anEntryBecomesVisibleOnlyWhenItsWriterCommits(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let writer = try cache.makeWriter(forKey: "greeting")
            try writer.write(Data("hello ".utf8))
            try writer.write(Data("world".utf8))
            #expect(cache.entry(forKey: "greeting") == nil)
            #expect(readyFiles(root).isEmpty)
            #expect(loadingFiles(root).count == 1)

            let entry = try writer.commit(metadata: FileCacheMetadata(contentType: "text/plain"))
            #expect(entry.byteCount == 11)
            #expect(try cache.readData(for: entry) == Data("hello world".utf8))
            #expect(try Data(contentsOf: entry.fileURL) == Data("hello world".utf8))
            #expect(cache.entry(forKey: "greeting")?.metadata.contentType == "text/plain")
            #expect(readyFiles(root) == [relativePath(of: entry, in: root)])
            #expect(loadingFiles(root).isEmpty)
            #expect(cache.statistics == FileCacheStatistics(count: 1, totalBytes: 11))
        }
    }

    @Test(arguments: CacheKind.allCases)
    func anAbortedWriteLeavesNothing(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let writer = try cache.makeWriter(forKey: "k")
            try writer.write(testBytes(5000, seed: 1))
            writer.abort()
            writer.abort()  // idempotent
            #expect(throws: FileCacheError.writerClosed) { try writer.write(Data([1])) }
            #expect(throws: FileCacheError.writerClosed) { try writer.commit(metadata: FileCacheMetadata()) }
            #expect(cache.entry(forKey: "k") == nil)
            #expect(readyFiles(root).isEmpty)
            #expect(loadingFiles(root).isEmpty)
            #expect(cache.statistics.count == 0)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aFailedCommitLeavesNothingVisible(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let writer = try cache.makeWriter(forKey: "k")
            try writer.write(testBytes(100, seed: 2))
            // The in-progress file disappears (as when loading/ is cleaned under a writer).
            for name in loadingFiles(root) {
                try FileManager.default.removeItem(at: root.appendingPathComponent("loading/" + name))
            }
            #expect(throws: FileCacheError.self) { try writer.commit(metadata: FileCacheMetadata()) }
            #expect(cache.entry(forKey: "k") == nil)
            #expect(readyFiles(root).isEmpty)
            // The cache keeps working.
            let entry = try cache.store(Data("ok".utf8), forKey: "k", metadata: FileCacheMetadata())
            #expect(try cache.readData(for: entry) == Data("ok".utf8))
        }
    }

    @Test(arguments: CacheKind.allCases)
    func anAbandonedWriterLeavesNothing(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            do {
                let writer = try cache.makeWriter(forKey: "k")
                try writer.write(testBytes(100, seed: 3))
                #expect(loadingFiles(root).count == 1)
            }
            #expect(cache.entry(forKey: "k") == nil)
            #expect(readyFiles(root).isEmpty)
            #expect(loadingFiles(root).isEmpty)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func loadingIsEmptiedAtReopen(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                try cache.store(Data("kept".utf8), forKey: "kept", metadata: FileCacheMetadata())
            }
            // What a killed writer leaves behind.
            for index in 0..<3 {
                try testBytes(100, seed: UInt64(index)).write(to: root.appendingPathComponent("loading/999-\(index)-dead.part"))
            }
            #expect(loadingFiles(root).count == 3)
            let reopened = try kind.open(root)
            #expect(loadingFiles(root).isEmpty)
            #expect(try expectConsistent(reopened, root: root).map(\.key) == ["kept"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aNewCommitReplacesThePreviousVersion(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let first = try cache.store(Data("one".utf8), forKey: "k", metadata: FileCacheMetadata(etag: "1"))
            let second = try cache.store(Data("two!".utf8), forKey: "k", metadata: FileCacheMetadata(etag: "2"))
            #expect(first.fileURL != second.fileURL)
            #expect(cache.entry(forKey: "k")?.metadata.etag == "2")
            #expect(try cache.readData(for: second) == Data("two!".utf8))
            // The replaced entry is stale: its reader is told to look again, the new one stays.
            #expect(throws: FileCacheError.corrupted(key: "k")) { try cache.readData(for: first) }
            #expect(try cache.readData(for: second) == Data("two!".utf8))
            #expect(cache.statistics == FileCacheStatistics(count: 1, totalBytes: 4))
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func removeEntryDeletesTheFile(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            try cache.store(Data("a".utf8), forKey: "a", metadata: FileCacheMetadata())
            try cache.store(Data("b".utf8), forKey: "b", metadata: FileCacheMetadata())
            cache.removeEntry(forKey: "a")
            cache.removeEntry(forKey: "missing")
            #expect(cache.entry(forKey: "a") == nil)
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["b"])
        }
    }

    // MARK: The commit's window

    // A commit renames its file into `ready/` outside the cache's mutex (a rename took 1–1.5 ms
    // on a busy disk while every lookup waited), between two locked steps that hold the journal
    // lock throughout. What runs in that window must not lose the entry.

    @Test(arguments: CacheKind.allCases)
    func aReconciliationBetweenTheRenameAndTheRecordKeepsTheFile(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let store = try cacheStore(of: cache)
            let ran = Lock(false)
            store.betweenRenameAndRecord.withLock { hook in
                hook = { [store] in
                    // What a repair does: delete every file in ready/ the index does not name.
                    store.state.withLock { $0._reconcile() }
                    ran.withLock { $0 = true }
                }
            }
            let bytes = testBytes(500, seed: 1)
            try cache.store(bytes, forKey: "a", metadata: FileCacheMetadata())
            #expect(ran.withLock { $0 })
            let entry = try #require(cache.entry(forKey: "a"))
            #expect(try cache.readData(for: entry) == bytes)
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["a"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func removeAllBetweenTheRenameAndTheRecordKeepsTheNewEntryOnly(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            try cache.store(Data("old".utf8), forKey: "old", metadata: FileCacheMetadata())
            let store = try cacheStore(of: cache)
            let ran = Lock(false)
            store.betweenRenameAndRecord.withLock { hook in
                hook = { [cache] in
                    guard !ran.withLock({ $0 }) else { return }
                    ran.withLock { $0 = true }
                    cache.removeAll()
                }
            }
            let bytes = testBytes(700, seed: 2)
            try cache.store(bytes, forKey: "new", metadata: FileCacheMetadata())
            #expect(ran.withLock { $0 })
            #expect(cache.entry(forKey: "old") == nil)
            let entry = try #require(cache.entry(forKey: "new"))
            #expect(try cache.readData(for: entry) == bytes)
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["new"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func lookupsRunWhileACommitIsBetweenTheRenameAndTheRecord(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            try cache.store(Data("x".utf8), forKey: "x", metadata: FileCacheMetadata())
            let store = try cacheStore(of: cache)
            let found = Lock<Bool?>(nil)
            store.betweenRenameAndRecord.withLock { hook in
                hook = { [cache] in
                    // On the committing thread, outside the mutex: a lookup would deadlock if the
                    // commit held it here.
                    found.withLock { $0 = cache.entry(forKey: "x") != nil }
                }
            }
            try cache.store(Data("y".utf8), forKey: "y", metadata: FileCacheMetadata())
            #expect(found.withLock { $0 } == true)
            #expect(try Set(expectConsistent(cache, root: root).map(\.key)) == ["x", "y"])
        }
    }
}
