import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// removeAll empties the cache and leaves it working (HJCache's big cache did not).
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheRemoveAllTests {
    @Test(arguments: CacheKind.allCases)
    func removeAllLeavesAWorkingCache(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root, countLimit: 1000)
            for index in 0..<100 {
                try cache.store(testBytes(100, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
            }
            let writer = try cache.makeWriter(forKey: "in-flight")
            try writer.write(Data("in flight".utf8))

            cache.removeAll()
            #expect(cache.statistics == FileCacheStatistics(count: 0, totalBytes: 0))
            #expect(cache.entry(forKey: "k1") == nil)
            #expect(readyFiles(root).isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.contains("trash") }.isEmpty)

            // Writes keep working, including one that started before removeAll.
            let entry = try cache.store(Data("after".utf8), forKey: "after", metadata: FileCacheMetadata())
            #expect(try cache.readData(for: entry) == Data("after".utf8))
            try writer.commit(metadata: FileCacheMetadata())
            #expect(Set(try expectConsistent(cache, root: root).map(\.key)) == ["after", "in-flight"])
            cache.removeAll()
            cache.removeAll()
            try cache.store(Data("again".utf8), forKey: "again", metadata: FileCacheMetadata())
        }
    }

    @Test(arguments: CacheKind.allCases)
    func removeAllSurvivesReopening(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                for index in 0..<30 {
                    try cache.store(testBytes(50, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
                cache.removeAll()
                try cache.store(Data("x".utf8), forKey: "x", metadata: FileCacheMetadata())
            }
            let reopened = try kind.open(root)
            #expect(try expectConsistent(reopened, root: root).map(\.key) == ["x"])
        }
    }
}
