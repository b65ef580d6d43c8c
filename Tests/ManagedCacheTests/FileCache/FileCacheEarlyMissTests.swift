import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// Misses before the opening's replay has finished: answered from the journal when it is certain
/// the key has no entry, never for a key the replayed index would have. The caches are opened with
/// `replaysInBackground: false`, which holds the replay until an operation waits for it, so
/// `isOpening` tells whether a lookup waited (no timing decides anything here).
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheEarlyMissTests {
    /// Stores `count` entries `k0`… and closes the cache (the closing writes the lookup table).
    private func fill(_ root: URL, kind: CacheKind, count: Int) throws {
        let cache = try kind.open(root)
        for index in 0..<count {
            try cache.store(testBytes(64, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
        }
    }

    @Test(arguments: CacheKind.allCases)
    func missesRightAfterOpeningDoNotWaitForTheReplay(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            try fill(root, kind: kind, count: 2_000)
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(store.openingUsesLookupTable)
            for index in 0..<500 {
                #expect(cache.entry(forKey: "absent-\(index)") == nil)
            }
            #expect(store.isOpening, "no miss waited for the replay")
            #expect(cache.entry(forKey: "k1999") != nil)
            #expect(store.isOpening)
            store.finishOpening()
            #expect(cache.entry(forKey: "absent-0") == nil)
            #expect(cache.statistics.count == 2_000)
        }
    }

    /// What the last session wrote after the lookup table (a tail the closing did not rewrite the
    /// table for) is found, and what it removed there is a miss, both before the replay.
    @Test(arguments: CacheKind.allCases)
    func aKeyWrittenInTheJournalTailIsNotAMiss(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            try fill(root, kind: kind, count: 200)
            let table = try Data(contentsOf: root.appendingPathComponent("journal.lookup"))
            do {
                let cache = try kind.open(root)
                try cache.store(testBytes(90, seed: 90), forKey: "tail", metadata: FileCacheMetadata())
                cache.removeEntry(forKey: "k5")
                try cache.store(testBytes(91, seed: 91), forKey: "k6", metadata: FileCacheMetadata(etag: "new"))
            }
            #expect(try Data(contentsOf: root.appendingPathComponent("journal.lookup")) == table, "the tail is past the table")
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            let tail = try #require(cache.entry(forKey: "tail"), "a key of the tail is no miss")
            #expect(try cache.readData(for: tail) == testBytes(90, seed: 90))
            #expect(cache.entry(forKey: "k6")?.metadata.etag == "new")
            #expect(cache.entry(forKey: "k5") == nil, "removed in the tail")
            #expect(cache.entry(forKey: "never") == nil)
            #expect(store.isOpening, "answered without the replay")
            store.finishOpening()
            #expect(cache.entry(forKey: "tail") != nil)
            #expect(cache.entry(forKey: "k5") == nil)
        }
    }

    /// After a crash (a session file left behind) the journal's tail holds what the killed
    /// instance committed: found, not missed; a key it never wrote is a miss at once.
    @Test(arguments: CacheKind.allCases)
    func theTailOfACrashedSessionIsFound(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            try fill(root, kind: kind, count: 200)
            do {
                let cache = try kind.open(root)
                try cache.store(testBytes(90, seed: 90), forKey: "crashed", metadata: FileCacheMetadata())
            }
            try Data().write(to: root.appendingPathComponent("sessions/4242-killed"))
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(try #require(store.state.withLock { $0.opening }).reconcilesCrash)
            #expect(cache.entry(forKey: "crashed") != nil)
            #expect(cache.entry(forKey: "never") == nil)
            #expect(store.isOpening, "answered without the replay")
            try expectConsistent(cache, root: root)
            #expect(cache.entry(forKey: "crashed") != nil)
        }
    }

    /// A torn frame at the journal's end (a process killed while appending): the journal is not
    /// certain of anything past the table, so a miss waits for the replay, which repairs.
    @Test(arguments: CacheKind.allCases)
    func aTornTailMakesAMissWait(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            try fill(root, kind: kind, count: 50)
            let journal = try FileHandle(forWritingTo: root.appendingPathComponent("journal"))
            try journal.seekToEnd()
            try journal.write(contentsOf: Data([0x40, 0, 0, 0, 1, 2, 3]))
            try journal.close()
            try Data().write(to: root.appendingPathComponent("sessions/4242-killed"))
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(cache.entry(forKey: "never") == nil)
            #expect(!store.isOpening, "the miss waited for the replay")
            #expect(cache.entry(forKey: "k7") != nil)
            #expect(try expectConsistent(cache, root: root).count == 50)
        }
    }

    /// A lookup table whose slots were damaged (the header and the regions' checksums intact)
    /// answers no miss from them: a key it lost would otherwise be reported absent.
    @Test(arguments: CacheKind.allCases)
    func aDamagedLookupTableAnswersNoMiss(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            // Enough entries for the closing to rewrite the table over them (a short tail keeps the old one).
            try fill(root, kind: kind, count: 2_000)
            let url = root.appendingPathComponent("journal.lookup")
            var table = try Data(contentsOf: url)
            // Every slot emptied: each key looks absent from the table.
            let header = JournalLookupTable.headerSize
            let slotsEnd = header + lookupTableSlotCount(table) * 16
            table.replaceSubrange(header..<slotsEnd, with: Data(count: slotsEnd - header))
            try table.write(to: url)
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(store.openingUsesLookupTable)
            #expect(try #require(store.state.withLock { $0.opening }).snapshot.table?.covered ?? 0 > 100_000)
            #expect(cache.entry(forKey: "k3") != nil, "not a false miss")
            #expect(!store.isOpening, "the lookup waited for the replay")
        }
    }

    /// The table vouches for its slots a region at a time: with one region damaged (its
    /// checksum left as written), a miss that probes only intact slots is still answered before
    /// the replay, and one that probes the damaged region waits for it.
    @Test(arguments: CacheKind.allCases)
    func aDamagedRegionOfTheLookupTableAnswersNoMissThroughIt(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            try fill(root, kind: kind, count: 4_000)
            let url = root.appendingPathComponent("journal.lookup")
            var table = try Data(contentsOf: url)
            let slotCount = lookupTableSlotCount(table)
            let region = JournalLookupTable.regionSlots
            try #require(slotCount >= 2 * region)
            // The second region's slots emptied: a chain through it ends there, as if its key were absent.
            let damaged = (JournalLookupTable.headerSize + region * 16)..<(JournalLookupTable.headerSize + 2 * region * 16)
            table.replaceSubrange(damaged, with: Data(count: damaged.count))
            try table.write(to: url)
            func home(_ key: String) -> Int {
                var key = key
                return key.withUTF8 { Int(truncatingIfNeeded: XXH64.hash(UnsafeRawBufferPointer($0)) >> 32) & (slotCount - 1) }
            }
            let candidates = (0..<100_000).lazy.map { "absent-\($0)" }
            // Half a region from the damage: at half full, no chain runs that long.
            let throughIntact = try #require(candidates.first { home($0) < region / 2 })
            let throughDamaged = try #require(candidates.first { (region + 1)..<(2 * region) ~= home($0) })
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(store.openingUsesLookupTable)
            #expect(cache.entry(forKey: throughIntact) == nil)
            #expect(store.isOpening, "a miss through intact slots waited for the replay")
            #expect(cache.entry(forKey: throughDamaged) == nil)
            #expect(!store.isOpening, "a miss through the damaged region was answered from it")
            #expect(cache.entry(forKey: "k3") != nil)
        }
    }

    /// Without a lookup table, a journal longer than a miss may scan (`missScanLimit`): a hit is
    /// still served from the journal, a miss waits for the replay.
    @Test(arguments: CacheKind.allCases)
    func withoutATableALongJournalServesHitsEarlyAndMissesWait(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let padding = String(repeating: "p", count: 2_000)
            let count = JournalSnapshot.missScanLimit / 2_000 + 100
            do {
                let cache = try kind.open(root)
                for index in 0..<count {
                    try cache.store(testBytes(16, seed: UInt64(index)), forKey: "\(padding)\(index)", metadata: FileCacheMetadata())
                }
            }
            try FileManager.default.removeItem(at: root.appendingPathComponent("journal.lookup"))
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(!store.openingUsesLookupTable)
            let entry = try #require(cache.entry(forKey: "\(padding)7"))
            #expect(try cache.readData(for: entry) == testBytes(16, seed: 7))
            #expect(store.isOpening, "the hit was served from the journal")
            #expect(cache.entry(forKey: "never") == nil)
            #expect(!store.isOpening, "the miss waited for the replay")
        }
    }

    /// What another instance appended after the opening is not in the snapshot: a lookup of it
    /// waits for the replay, which catches up, and finds it.
    @Test(arguments: CacheKind.allCases)
    func whatAnotherInstanceAppendsAfterTheOpeningIsNoMiss(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            try fill(root, kind: kind, count: 50)
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(cache.entry(forKey: "never") == nil)
            #expect(store.isOpening)
            let other = try kind.open(root)
            try other.store(testBytes(70, seed: 70), forKey: "later", metadata: FileCacheMetadata())
            let later = try #require(cache.entry(forKey: "later"))
            #expect(try cache.readData(for: later) == testBytes(70, seed: 70))
            #expect(!store.isOpening)
            withExtendedLifetime(other) {}
        }
    }
}
