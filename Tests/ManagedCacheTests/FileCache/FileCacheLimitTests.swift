import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// Limits by count, bytes and age hold after every commit; eviction is least recently used.
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheLimitTests {
    @Test(arguments: CacheKind.allCases)
    func theCountLimitHoldsAfterEveryCommit(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root, countLimit: 20)
            var generator = SplitMix(state: 7)
            for index in 0..<200 {
                try cache.store(
                    testBytes(Int(generator.next() % 3000), seed: UInt64(index)), forKey: "k\(index)",
                    metadata: FileCacheMetadata())
                #expect(cache.statistics.count <= 20)
            }
            #expect(cache.statistics.count >= 10)
            #expect(cache.entry(forKey: "k199") != nil)
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func theByteLimitHoldsAfterEveryCommit(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root, byteLimit: 50_000)
            var generator = SplitMix(state: 8)
            for index in 0..<200 {
                try cache.store(
                    testBytes(500 + Int(generator.next() % 4500), seed: UInt64(index)), forKey: "k\(index)",
                    metadata: FileCacheMetadata())
                #expect(cache.statistics.totalBytes <= 50_000)
            }
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func anObjectLargerThanTheByteLimitExceedsItOnlyByItself(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root, byteLimit: 10_000)
            for index in 0..<3 {
                try cache.store(testBytes(2000, seed: UInt64(index)), forKey: "small\(index)", metadata: FileCacheMetadata())
            }
            let big = try cache.store(testBytes(25_000, seed: 9), forKey: "big", metadata: FileCacheMetadata())
            // Everything else went; the object just written stays readable.
            #expect(cache.statistics == FileCacheStatistics(count: 1, totalBytes: 25_000))
            #expect(try cache.readData(for: big) == testBytes(25_000, seed: 9))
            try cache.store(testBytes(1000, seed: 10), forKey: "after", metadata: FileCacheMetadata())
            #expect(cache.entry(forKey: "big") == nil)
            #expect(cache.statistics.totalBytes <= 10_000)
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func theMaximumAgeHoldsAfterEveryCommit(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let clock = TestClock()
            let cache = try kind.open(root, maximumAge: 100, clock: clock)
            try cache.store(Data("a".utf8), forKey: "old1", metadata: FileCacheMetadata())
            try cache.store(Data("b".utf8), forKey: "old2", metadata: FileCacheMetadata())
            clock.advance(by: 60)
            try cache.store(Data("c".utf8), forKey: "young", metadata: FileCacheMetadata())
            clock.advance(by: 50)
            // old1 and old2 are 110 s old: never returned, and deleted by the next commit.
            #expect(cache.entry(forKey: "old1") == nil)
            try cache.store(Data("d".utf8), forKey: "new", metadata: FileCacheMetadata())
            #expect(Set(try expectConsistent(cache, root: root).map(\.key)) == ["young", "new"])
            clock.advance(by: 60)
            try cache.store(Data("e".utf8), forKey: "newest", metadata: FileCacheMetadata())
            #expect(Set(try expectConsistent(cache, root: root).map(\.key)) == ["new", "newest"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aPerEntryExpirationDateOverridesTheMaximumAge(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let clock = TestClock()
            let cache = try kind.open(root, maximumAge: 100, clock: clock)
            try cache.store(Data("1".utf8), forKey: "long", metadata: FileCacheMetadata(expirationDate: clock.now + 1000))
            try cache.store(Data("2".utf8), forKey: "short", metadata: FileCacheMetadata(expirationDate: clock.now + 10))
            try cache.store(Data("3".utf8), forKey: "default", metadata: FileCacheMetadata())
            clock.advance(by: 20)
            #expect(cache.entry(forKey: "short") == nil)
            #expect(cache.entry(forKey: "default") != nil)
            clock.advance(by: 500)
            #expect(cache.entry(forKey: "default") == nil)
            #expect(cache.entry(forKey: "long") != nil)
            try cache.store(Data("4".utf8), forKey: "other", metadata: FileCacheMetadata())
            #expect(Set(try expectConsistent(cache, root: root).map(\.key)) == ["long", "other"])
            // New metadata brings a new expiry.
            try cache.updateMetadata(FileCacheMetadata(expirationDate: clock.now + 5), forKey: "long")
            clock.advance(by: 6)
            #expect(cache.entry(forKey: "long") == nil)
        }
    }

    @Test func aHitProtectsAnEntryFromEviction() throws {
        try withTemporaryDirectory { root in
            let cache = try FileCache(directory: root, configuration: .init(countLimit: 3))
            for key in ["a", "b", "c"] {
                try cache.store(Data(key.utf8), forKey: key)
            }
            #expect(cache.entry(forKey: "a") != nil)
            try cache.store(Data("d".utf8), forKey: "d")
            #expect(cache.entry(forKey: "b") == nil)
            #expect(cache.entriesByRecency(limit: 10).map(\.key) == ["d", "a", "c"])
            _ = cache.entry(forKey: "c")
            try cache.store(Data("e".utf8), forKey: "e")
            try cache.store(Data("f".utf8), forKey: "f")
            #expect(cache.entriesByRecency(limit: 10).map(\.key) == ["f", "e", "c"])
        }
    }

    @Test func aHitProtectsAnEntryWithinABigFileCacheSlice() throws {
        try withTemporaryDirectory { root in
            // Four keys in one bucket, so one slice decides.
            var keys: [String] = []
            var candidate = 0
            while keys.count < 4 {
                let key = "key\(candidate)"
                if FileID.makeNew(forKey: key).bucket(of: 256) == 7 { keys.append(key) }
                candidate += 1
            }
            let cache = try BigFileCache(directory: root, configuration: .init(countLimit: 3))
            for key in keys.prefix(3) {
                try cache.store(Data(key.utf8), forKey: key)
            }
            #expect(cache.entry(forKey: keys[0]) != nil)
            try cache.store(Data("new".utf8), forKey: keys[3])
            #expect(cache.statistics.count <= 3)
            #expect(cache.entry(forKey: keys[0]) != nil)
            #expect(cache.entry(forKey: keys[1]) == nil)
            #expect(cache.entry(forKey: keys[3]) != nil)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func smallerLimitsAreEnforcedAtOpen(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                for index in 0..<50 {
                    try cache.store(testBytes(100, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
            }
            let smaller = try kind.open(root, countLimit: 10)
            #expect(smaller.statistics.count <= 10)
            try expectConsistent(smaller, root: root)
        }
    }
}
