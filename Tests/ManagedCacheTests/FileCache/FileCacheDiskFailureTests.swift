import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// When the cache directory goes away or becomes unusable, operations fail cleanly (writes throw
/// `FileCacheError.io`, lookups return nil) and the cache recovers once the disk is usable again.
/// (Making the directory read-only proves nothing here: the tests run as root, which ignores
/// permissions; replacing the directory by a regular file fails every operation the same way.)
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheDiskFailureTests {
    @Test(arguments: CacheKind.allCases)
    func aCacheWhoseDirectoryBecameAFileFailsCleanlyAndRecovers(kind: CacheKind) throws {
        try withTemporaryDirectory { parent in
            let root = parent.appendingPathComponent("cache")
            let cache = try kind.open(root, countLimit: 100)
            let before = try cache.store(Data("before".utf8), forKey: "before", metadata: FileCacheMetadata())

            try FileManager.default.removeItem(at: root)
            try Data("not a directory".utf8).write(to: root)

            #expect(throws: FileCacheError.self) { try cache.store(Data("x".utf8), forKey: "x", metadata: FileCacheMetadata()) }
            #expect(throws: FileCacheError.self) { try cache.makeWriter(forKey: "y") }
            #expect(cache.entry(forKey: "before") == nil)
            #expect(cache.entry(forKey: "x") == nil)
            #expect(throws: FileCacheError.self) { try cache.readData(for: before) }
            #expect(throws: FileCacheError.self) { try cache.verify(before) }
            #expect(throws: FileCacheError.self) { try cache.updateMetadata(FileCacheMetadata(), forKey: "before") }
            cache.removeEntry(forKey: "before")
            cache.trim()
            cache.removeAll()
            _ = cache.statistics
            _ = cache.entriesByRecency(limit: 10)
            #expect(try Data(contentsOf: root) == Data("not a directory".utf8))

            // The disk is usable again.
            try FileManager.default.removeItem(at: root)
            let after = try cache.store(Data("after".utf8), forKey: "after", metadata: FileCacheMetadata())
            #expect(try cache.readData(for: after) == Data("after".utf8))
            #expect(cache.entry(forKey: "before") == nil)
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["after"])
            _ = consume cache
            let reopened = try kind.open(root)
            #expect(try expectConsistent(reopened, root: root).map(\.key) == ["after"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aRemovedDirectoryIsRecreatedByTheNextWrite(kind: CacheKind) throws {
        try withTemporaryDirectory { parent in
            let root = parent.appendingPathComponent("cache")
            let cache = try kind.open(root)
            let old = try cache.store(Data("old".utf8), forKey: "old", metadata: FileCacheMetadata())
            try FileManager.default.removeItem(at: root)
            #expect(throws: FileCacheError.self) { try cache.readData(for: old) }
            let new = try cache.store(Data("new".utf8), forKey: "new", metadata: FileCacheMetadata())
            #expect(try cache.readData(for: new) == Data("new".utf8))
            #expect(cache.entry(forKey: "old") == nil)
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["new"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func releasingACacheWhoseDirectoryWasRemovedLeavesItRemoved(kind: CacheKind) throws {
        try withTemporaryDirectory { parent in
            let root = parent.appendingPathComponent("cache")
            do {
                let cache = try kind.open(root)
                try cache.store(Data("x".utf8), forKey: "x", metadata: FileCacheMetadata())
                _ = cache.entry(forKey: "x")  // a pending touch, which a clean close would write
                try FileManager.default.removeItem(at: root)
            }
            #expect(!FileManager.default.fileExists(atPath: root.path))
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aRemovedReadyDirectoryLosesItsEntriesOnly(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let lost = try cache.store(Data("lost".utf8), forKey: "lost", metadata: FileCacheMetadata())
            try FileManager.default.removeItem(at: root.appendingPathComponent("ready"))
            #expect(throws: FileCacheError.self) { try cache.readData(for: lost) }
            let kept = try cache.store(Data("kept".utf8), forKey: "kept", metadata: FileCacheMetadata())
            #expect(throws: FileCacheError.self) {
                if let again = cache.entry(forKey: "lost") {
                    _ = try cache.readData(for: again)
                } else {
                    throw FileCacheError.corrupted(key: "lost")
                }
            }
            #expect(try cache.readData(for: kept) == Data("kept".utf8))
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["kept"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aCacheCannotBeOpenedOnAFileAndSaysSo(kind: CacheKind) throws {
        try withTemporaryDirectory { parent in
            let root = parent.appendingPathComponent("file")
            try Data("x".utf8).write(to: root)
            #expect(throws: FileCacheError.self) { try kind.open(root) }
        }
    }
}
