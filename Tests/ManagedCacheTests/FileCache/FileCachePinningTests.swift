import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// Pinned entries in both file caches: kept by the byte limit, the count limit, trims (a
/// `BigFileCache`'s tenth-at-a-time passes included) and expiry; held to a pinned quota of their
/// own, which a store or pin exceeds with a typed error and nothing half-written; removed by
/// removals and `removeAll`; listed with their sizes; journaled, so they survive a reopening.
@Suite(.offCooperativePool) struct FileCachePinningTests {
    /// Opens a cache of `kind` with a pinned quota.
    static func open(
        _ kind: CacheKind, _ url: URL, byteLimit: Int? = nil, countLimit: Int? = nil, maximumAge: TimeInterval? = nil,
        pinnedByteLimit: Int? = nil, clock: TestClock? = nil, replaysInBackground: Bool = true
    ) throws -> any FileCaching {
        var now: @Sendable () -> Date = { Date() }
        if let clock { now = clock.closure }
        switch kind {
        case .single:
            return try FileCache(
                directory: url,
                configuration: .init(
                    byteLimit: byteLimit, countLimit: countLimit, maximumAge: maximumAge, pinnedByteLimit: pinnedByteLimit),
                clock: now, replaysInBackground: replaysInBackground)
        case .big:
            return try BigFileCache(
                directory: url,
                configuration: .init(
                    byteLimit: byteLimit, countLimit: countLimit, maximumAge: maximumAge, pinnedByteLimit: pinnedByteLimit),
                clock: now, replaysInBackground: replaysInBackground)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func pinnedEntriesOutliveTheLimitsTrimsAndExpiry(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let clock = TestClock()
            let cache = try Self.open(kind, root, byteLimit: 20_000, countLimit: 8, maximumAge: 100, clock: clock)
            let pinned = testBytes(6_000, seed: 1)
            try cache.store(pinned, forKey: "pinned", metadata: FileCacheMetadata(), pinned: true)
            // An expiration date of its own does not expire a pinned entry either.
            let dated = FileCacheMetadata(expirationDate: clock.now.addingTimeInterval(10))
            try cache.store(testBytes(100, seed: 2), forKey: "dated", metadata: dated, pinned: true)
            for index in 0..<60 {
                try cache.store(testBytes(3_000, seed: UInt64(100 + index)), forKey: "plain-\(index)", metadata: FileCacheMetadata())
            }
            var statistics = cache.statistics
            #expect(statistics.pinnedCount == 2 && statistics.pinnedBytes == 6_100)
            // The limits hold for the unpinned entries, the pinned one on top of them.
            #expect(statistics.count - statistics.pinnedCount <= 8)
            #expect(statistics.totalBytes - statistics.pinnedBytes <= 20_000)
            let entry = try #require(cache.entry(forKey: "pinned"))
            #expect(try cache.readData(for: entry) == pinned)
            // Past every entry's age: the unpinned ones expire, the pinned one stays and is found.
            clock.advance(by: 1_000)
            for _ in 0..<(2 * BigFileCache.passesPerRotation) { cache.trim() }
            statistics = cache.statistics
            #expect(statistics.count == 2 && statistics.pinnedCount == 2)
            let late = try #require(cache.entry(forKey: "pinned"))
            #expect(try cache.readData(for: late) == pinned)
            #expect(cache.entry(forKey: "dated") != nil)
            #expect(cache.pinnedEntries().map(\.key) == ["dated", "pinned"])  // most recently used first
            #expect(cache.pinnedEntries().map(\.byteCount) == [100, 6_000])
            try expectConsistent(cache, root: root)
        }
    }

    @Test func bigFileCacheTrimPassesNeverTakeAPinnedEntry() throws {
        try withTemporaryDirectory { root in
            let cache = try BigFileCache(
                directory: root, configuration: .init(countLimit: 50, pinnedByteLimit: nil), clock: { Date() })
            for index in 0..<40 {
                try cache.store(testBytes(100, seed: UInt64(index)), forKey: "pinned-\(index)", pinned: true)
            }
            for index in 0..<400 {
                try cache.store(testBytes(100, seed: UInt64(1_000 + index)), forKey: "plain-\(index)")
            }
            var removed = 0
            for _ in 0..<(3 * BigFileCache.passesPerRotation) { removed += cache.trimPass()?.entriesRemoved ?? 0 }
            let statistics = cache.statistics
            #expect(statistics.pinnedCount == 40)
            #expect(statistics.count - statistics.pinnedCount <= 50)
            #expect(Set(cache.pinnedEntries().map(\.key)) == Set((0..<40).map { "pinned-\($0)" }))
            #expect(try cache.pinnedEntries().allSatisfy { try cache.readData(for: $0).count == 100 })
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aStoreOverThePinnedQuotaFailsTypedAndKeepsThePreviousVersion(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try Self.open(kind, root, byteLimit: 4_000, pinnedByteLimit: 5_000)
            try cache.store(testBytes(3_000, seed: 1), forKey: "a", metadata: FileCacheMetadata(), pinned: true)
            #expect(throws: FileCacheError.pinnedQuotaExceeded(key: "b", byteCount: 3_000, pinnedBytes: 3_000, quota: 5_000)) {
                try cache.store(testBytes(3_000, seed: 2), forKey: "b", metadata: FileCacheMetadata(), pinned: true)
            }
            #expect(cache.entry(forKey: "b") == nil)
            // Unpinned, the same bytes go under the byte limit.
            try cache.store(testBytes(3_000, seed: 2), forKey: "b", metadata: FileCacheMetadata())
            // A pinned replacement whose growth does not fit: the previous version stays, pinned.
            let original = testBytes(3_000, seed: 1)
            #expect(throws: FileCacheError.pinnedQuotaExceeded(key: "a", byteCount: 5_001, pinnedBytes: 0, quota: 5_000)) {
                try cache.store(testBytes(5_001, seed: 3), forKey: "a", metadata: FileCacheMetadata(), pinned: true)
            }
            // Streamed: the writer's commit fails the same way.
            let writer = try cache.makeWriter(forKey: "a", pinned: false)  // a pinned key stays pinned
            try writer.write(testBytes(6_000, seed: 4))
            #expect(throws: FileCacheError.pinnedQuotaExceeded(key: "a", byteCount: 6_000, pinnedBytes: 0, quota: 5_000)) {
                try writer.commit(metadata: FileCacheMetadata())
            }
            let kept = try #require(cache.entry(forKey: "a"))
            #expect(try cache.readData(for: kept) == original)
            #expect(cache.statistics.pinnedBytes == 3_000)
            // Exactly at the quota fits.
            try cache.store(testBytes(2_000, seed: 5), forKey: "c", metadata: FileCacheMetadata(), pinned: true)
            #expect(cache.statistics.pinnedBytes == 5_000)
            try expectConsistent(cache, root: root)  // no orphan in ready/, nothing left in loading/
        }
    }

    @Test(arguments: CacheKind.allCases)
    func pinningAndUnpinningByKey(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let clock = TestClock()
            let cache = try Self.open(kind, root, countLimit: 3, maximumAge: 100, pinnedByteLimit: 2_500, clock: clock)
            try cache.store(testBytes(1_000, seed: 1), forKey: "a", metadata: FileCacheMetadata())
            try cache.store(testBytes(2_000, seed: 2), forKey: "b", metadata: FileCacheMetadata())
            #expect(throws: FileCacheError.noEntry(key: "missing")) { try cache.pin(forKey: "missing") }
            try cache.unpin(forKey: "missing")  // nothing to unpin: fine
            let pinned = try cache.pin(forKey: "a")
            #expect(pinned.key == "a" && pinned.byteCount == 1_000)
            try cache.pin(forKey: "a")  // again: nothing changes
            #expect(throws: FileCacheError.pinnedQuotaExceeded(key: "b", byteCount: 2_000, pinnedBytes: 1_000, quota: 2_500)) {
                try cache.pin(forKey: "b")
            }
            #expect(cache.pinnedEntries().map(\.key) == ["a"])
            // Three unpinned entries fill the count limit without touching "a".
            for index in 0..<5 {
                try cache.store(testBytes(10, seed: UInt64(10 + index)), forKey: "plain-\(index)", metadata: FileCacheMetadata())
            }
            cache.trim()
            #expect(cache.entry(forKey: "a") != nil)
            #expect(cache.entry(forKey: "b") == nil)  // evicted: it never was pinned
            // Unpinned, "a" is the most recent entry under the count limit again...
            try cache.unpin(forKey: "a")
            #expect(cache.statistics.pinnedCount == 0 && cache.statistics.pinnedBytes == 0)
            #expect(cache.entry(forKey: "a") != nil)
            // ...and newer entries push it out.
            for index in 5..<12 {
                try cache.store(testBytes(10, seed: UInt64(10 + index)), forKey: "plain-\(index)", metadata: FileCacheMetadata())
            }
            cache.trim()
            #expect(cache.entry(forKey: "a") == nil)
            // An expired entry cannot be pinned: a lookup would not find it either.
            try cache.store(testBytes(10, seed: 99), forKey: "old", metadata: FileCacheMetadata())
            clock.advance(by: 200)
            #expect(throws: FileCacheError.noEntry(key: "old")) { try cache.pin(forKey: "old") }
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aNewCommitOfAPinnedKeyStaysPinnedUntilUnpinnedOrRemoved(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try Self.open(kind, root, countLimit: 2)
            try cache.store(testBytes(100, seed: 1), forKey: "k", metadata: FileCacheMetadata(), pinned: true)
            try cache.store(testBytes(300, seed: 2), forKey: "k", metadata: FileCacheMetadata(etag: "\"2\""))
            #expect(cache.pinnedEntries().map(\.byteCount) == [300])
            #expect(cache.statistics.pinnedBytes == 300)
            for index in 0..<6 {
                try cache.store(testBytes(10, seed: UInt64(index)), forKey: "plain-\(index)", metadata: FileCacheMetadata())
            }
            #expect(try cache.readData(for: try #require(cache.entry(forKey: "k"))) == testBytes(300, seed: 2))
            // A removal ends the pin: the key's next commit is not pinned.
            cache.removeEntry(forKey: "k")
            #expect(cache.pinnedEntries().isEmpty)
            try cache.store(testBytes(100, seed: 3), forKey: "k", metadata: FileCacheMetadata())
            #expect(cache.pinnedEntries().isEmpty)
            // `removeAll` removes pinned entries too.
            try cache.pin(forKey: "k")
            try cache.store(testBytes(50, seed: 4), forKey: "other", metadata: FileCacheMetadata(), pinned: true)
            cache.removeAll()
            #expect(cache.statistics == FileCacheStatistics(count: 0, totalBytes: 0))
            #expect(cache.pinnedEntries().isEmpty)
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases, [true, false])
    func pinsSurviveReopeningAndCompaction(kind: CacheKind, background: Bool) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try Self.open(kind, root, countLimit: 20)
                try cache.store(testBytes(100, seed: 1), forKey: "at-commit", metadata: FileCacheMetadata(), pinned: true)
                try cache.store(testBytes(200, seed: 2), forKey: "later", metadata: FileCacheMetadata())
                try cache.pin(forKey: "later")
                try cache.store(testBytes(300, seed: 3), forKey: "unpinned", metadata: FileCacheMetadata(), pinned: true)
                try cache.unpin(forKey: "unpinned")
            }
            do {
                // The lookup table written at the close predates nothing here; the next close
                // compacts after enough churn, rewriting pins into the entries' own records.
                let cache = try Self.open(kind, root, countLimit: 20, replaysInBackground: background)
                #expect(cache.entry(forKey: "later") != nil)  // possibly answered before the replay
                #expect(Set(cache.pinnedEntries().map(\.key)) == ["at-commit", "later"])
                #expect(cache.statistics.pinnedBytes == 300)
                try cache.unpin(forKey: "at-commit")
                try cache.pin(forKey: "unpinned")
                // Enough churn for the journal to be compacted: the pins move into the entries'
                // own `add` records, and no `pin` record is left.
                let padding = String(repeating: "p", count: 250)  // long keys: big records, fewer commits
                for round in 0..<1_200 {
                    try cache.store(
                        testBytes(100, seed: UInt64(round)), forKey: "churn-\(round % 10)-\(padding)", metadata: FileCacheMetadata())
                }
            }
            let types = journalRecordTypes(root)
            #expect(types.contains(9) && !types.contains(10), "record types: \(types.prefix(40))")
            let cache = try Self.open(kind, root, countLimit: 20, replaysInBackground: background)
            #expect(Set(cache.pinnedEntries().map(\.key)) == ["later", "unpinned"])
            #expect(cache.statistics.pinnedBytes == 500)
            #expect(try cache.readData(for: try #require(cache.entry(forKey: "unpinned"))) == testBytes(300, seed: 3))
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aPinMadeByAnotherInstanceIsKeptByThisOnesLimitsAndCountsAgainstItsQuota(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let first = try Self.open(kind, root, countLimit: 3, pinnedByteLimit: 1_000)
            let second = try Self.open(kind, root, countLimit: 3, pinnedByteLimit: 1_000)
            try first.store(testBytes(600, seed: 1), forKey: "shared", metadata: FileCacheMetadata())
            try first.pin(forKey: "shared")
            // The second instance learns of the pin from the journal: its commits evict around it...
            for index in 0..<10 {
                try second.store(testBytes(10, seed: UInt64(index)), forKey: "plain-\(index)", metadata: FileCacheMetadata())
            }
            #expect(second.entry(forKey: "shared") != nil)
            #expect(second.pinnedEntries().map(\.key) == ["shared"])
            // ...and its quota counts it.
            #expect(throws: FileCacheError.pinnedQuotaExceeded(key: "more", byteCount: 500, pinnedBytes: 600, quota: 1_000)) {
                try second.store(testBytes(500, seed: 2), forKey: "more", metadata: FileCacheMetadata(), pinned: true)
            }
            // An unpin by the second is seen by the first.
            try second.unpin(forKey: "shared")
            for index in 10..<20 {
                try first.store(testBytes(10, seed: UInt64(index)), forKey: "plain-\(index)", metadata: FileCacheMetadata())
            }
            #expect(first.pinnedEntries().isEmpty)
            #expect(first.entry(forKey: "shared") == nil, "unpinned, the count limit evicted it")
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aJournalWrittenBeforePinsExistedStillOpens(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("JournalFixtures/before-pinning/\(kind.rawValue)")
            let copy = root.appendingPathComponent("cache")
            try FileManager.default.copyItem(at: fixture, to: copy)
            for background in [true, false] {
                let cache = try Self.open(kind, copy, byteLimit: 1 << 20, replaysInBackground: background)
                #expect(try readText(cache, "https://example.com/0.png") == "entry 0 of the \(kind.rawValue) fixture")
                #expect(try readText(cache, "https://example.com/1.png") == "replaced")
                #expect(cache.entry(forKey: "https://example.com/2.png") == nil)
                #expect(cache.entry(forKey: "https://example.com/3.png")?.metadata.etag == "\"new\"")
                #expect(cache.entry(forKey: "https://example.com/5.png")?.metadata.contentType == "image/png")
                #expect(cache.statistics.count == 5 && cache.statistics.pinnedCount == 0)
                #expect(cache.pinnedEntries().isEmpty)
                try expectConsistent(cache, root: copy)
            }
            do {
                let cache = try Self.open(kind, copy, byteLimit: 1 << 20)
                try cache.pin(forKey: "https://example.com/4.png")
            }
            let cache = try Self.open(kind, copy, byteLimit: 1 << 20)
            #expect(cache.pinnedEntries().map(\.key) == ["https://example.com/4.png"])
            #expect(try readText(cache, "https://example.com/4.png") == "entry 4 of the \(kind.rawValue) fixture")
        }
    }

    /// The type of every record in the journal at `root`.
    private func journalRecordTypes(_ root: URL) -> [UInt8] {
        guard let bytes = FileManager.default.contents(atPath: root.appendingPathComponent("journal").path) else { return [] }
        var types: [UInt8] = []
        var offset = 0
        while offset + 9 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reversed().reduce(0) { $0 << 8 | Int($1) }
            types.append(bytes[offset + 8])
            offset += 8 + length
        }
        return types
    }

    private func readText(_ cache: any FileCaching, _ key: String) throws -> String? {
        guard let entry = cache.entry(forKey: key) else { return nil }
        return String(decoding: try cache.readData(for: entry), as: UTF8.self)
    }

    @Test func aCustomCacheThatCannotPinSaysSoAndStoresNothing() throws {
        let directory = TemporaryDirectory(prefix: "pin-custom")
        let cache: any FileCaching = SimpleFileCache(directory: directory.url)
        #expect(throws: FileCacheError.pinningUnsupported) {
            try cache.store(Data("x".utf8), forKey: "k", metadata: FileCacheMetadata(), pinned: true)
        }
        #expect(cache.entry(forKey: "k") == nil)
        #expect(throws: FileCacheError.pinningUnsupported) { try cache.makeWriter(forKey: "k", pinned: true) }
        try cache.store(Data("x".utf8), forKey: "k", metadata: FileCacheMetadata(), pinned: false)
        #expect(throws: FileCacheError.pinningUnsupported) { try cache.pin(forKey: "k") }
        #expect(throws: FileCacheError.pinningUnsupported) { try cache.unpin(forKey: "k") }
        #expect(cache.pinnedEntries().isEmpty)
        #expect(cache.statistics.pinnedCount == 0)
    }

    @Test(arguments: [1, 10])
    func theIndexKeepsPinnedEntriesOutOfEveryBucketListAndTheExpiryHeap(bucketCount: Int) {
        var generator = SplitMix(state: 20_261_127)
        var index = CacheIndex(bucketCount: bucketCount, maximumAge: 50)
        var model: [String: (size: Int, pinned: Bool)] = [:]
        for step in 0..<20_000 {
            let key = "k\(generator.next() % 300)"
            switch generator.next() % 10 {
            case 0..<5:
                var id = FileID.makeNew(forKey: key)
                id.version = UInt64(step + 1)
                let size = Int(generator.next() % 1_000)
                let pinned = generator.next() % 4 == 0
                let record = EntryRecord(
                    key: key, id: id, size: size, checksum: .xxh64(0), created: Double(step), session: 1,
                    metadata: FileCacheMetadata(), pinned: pinned)
                index.insert(record, recordBytes: 10, addOffset: step * 10)
                model[key] = (size, pinned)
            case 5..<7:
                if let slot = index.find(key) {
                    index.remove(slot)
                    model[key] = nil
                }
            case 7..<9:
                if let slot = index.find(key) {
                    let pinned = generator.next() % 2 == 0
                    index.setPinned(slot, pinned)
                    model[key]?.pinned = pinned
                }
            default:
                // Whatever the heap says expired is never pinned; it is removed, as a trim would.
                while let slot = index.popExpired(now: Double(step)) {
                    #expect(!index[slot].pinned)
                    let key = model.keys.first { index.find($0) == slot }
                    #expect(key != nil)
                    if let key { model[key] = nil }
                    index.remove(slot)
                }
            }
            guard step % 500 == 0 else { continue }
            #expect(index.count == model.count)
            #expect(index.pinnedCount == model.values.filter(\.pinned).count)
            #expect(index.pinnedBytes == model.values.filter(\.pinned).reduce(0) { $0 + $1.size })
            #expect(index.unpinnedBytes == model.values.filter { !$0.pinned }.reduce(0) { $0 + $1.size })
            var listed = 0
            for bucket in 0..<bucketCount {
                var slot = index.oldest(inBucket: bucket)
                var bytes = 0
                var count = 0
                while slot >= 0 {
                    #expect(!index[slot].pinned)
                    bytes += index[slot].size
                    count += 1
                    slot = index[slot].newer
                }
                #expect(count == index.buckets[bucket].count && bytes == index.buckets[bucket].bytes)
                listed += count
            }
            #expect(listed == index.unpinnedCount)
            #expect(index.pinnedSlots().allSatisfy { index[$0].pinned })
            #expect(index.pinnedSlots().count == index.pinnedCount)
            let order = index.slotsByRecency()
            #expect(order.count == index.count)
            #expect(zip(order, order.dropFirst()).allSatisfy { index[$0].useSequence > index[$1].useSequence })
        }
    }

    @Test func pinRecordsAndPinnedAddRecordsRoundTrip() {
        var encoder = JournalEncoder()
        let id = FileID(digestHigh: 1, digestLow: 2, version: 3)
        for checksum in [EntryChecksum.crc32(0xDEAD_BEEF), .xxh64(0x0123_4567_89AB_CDEF)] {
            for pinned in [false, true] {
                encoder.append(
                    .add(
                        EntryRecord(
                            key: "k", id: id, size: 5, checksum: checksum, created: 1, session: 2,
                            metadata: FileCacheMetadata(etag: "e"), pinned: pinned)))
            }
        }
        encoder.append(.pin(key: "k", version: 3, pinned: false))
        encoder.append(.pin(key: "k", version: 3, pinned: true))
        var decoded: [String] = []
        let (_, damaged) = encoder.bytes.withUnsafeBytes { raw in
            JournalDecoder.decode(raw) { record, _ in
                switch record {
                case .add(let entry): decoded.append("add \(entry.checksum) \(entry.pinned) \(entry.metadata.etag ?? "")")
                case .pin(let key, let version, let pinned): decoded.append("pin \(key) \(version) \(pinned)")
                default: decoded.append("other")
                }
            }
        }
        #expect(!damaged)
        #expect(
            decoded == [
                "add \(EntryChecksum.crc32(0xDEAD_BEEF)) false e", "add \(EntryChecksum.crc32(0xDEAD_BEEF)) true e",
                "add \(EntryChecksum.xxh64(0x0123_4567_89AB_CDEF)) false e", "add \(EntryChecksum.xxh64(0x0123_4567_89AB_CDEF)) true e",
                "pin k 3 false", "pin k 3 true",
            ])
    }
}
