import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// A cache opens without waiting for its index. Lookups that come before the
/// journal's replay has finished are answered from the journal itself, misses included when the
/// journal is certain; everything else waits for the replay, so what the caches promise holds as
/// before. These caches are opened with `replaysInBackground: false`, so the replay runs exactly
/// when an operation needs it: an operation that waited for it leaves `isOpening` false.
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheOpeningTests {
    /// How lookups before the replay find their key: with the lookup table written when the last
    /// instance closed, or by scanning the journal (the table deleted).
    enum Hint: String, CaseIterable, Sendable {
        case table, scan
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var kind: CacheKind
        var hint: Hint
        var testDescription: String { "\(kind.testDescription), \(hint)" }
    }

    static let cases = CacheKind.allCases.flatMap { kind in Hint.allCases.map { Case(kind: kind, hint: $0) } }

    /// Opens `root` without a background replay, as `hint` says.
    private func reopen(
        _ root: URL, _ testCase: Case, countLimit: Int? = nil, maximumAge: TimeInterval? = nil, clock: TestClock? = nil
    ) throws -> any FileCaching {
        let table = root.appendingPathComponent("journal.lookup")
        if testCase.hint == .scan { try? FileManager.default.removeItem(at: table) }
        let cache = try testCase.kind.open(
            root, countLimit: countLimit, maximumAge: maximumAge, clock: clock, replaysInBackground: false)
        #expect(try cacheStore(of: cache).openingUsesLookupTable == (testCase.hint == .table))
        return cache
    }

    /// Fills a cache with a history: replaced, removed and re-metadata'd entries.
    private func fillWithHistory(_ root: URL, kind: CacheKind) throws -> [String: Data] {
        var stored: [String: Data] = [:]
        let cache = try kind.open(root)
        for index in 0..<30 {
            let bytes = testBytes(200 + index, seed: UInt64(index))
            try cache.store(bytes, forKey: "k\(index)", metadata: FileCacheMetadata(etag: "v1"))
            stored["k\(index)"] = bytes
        }
        for index in stride(from: 0, to: 30, by: 5) {
            cache.removeEntry(forKey: "k\(index)")
            stored["k\(index)"] = nil
        }
        for index in stride(from: 1, to: 30, by: 5) {
            let bytes = testBytes(300 + index, seed: UInt64(100 + index))
            try cache.store(bytes, forKey: "k\(index)", metadata: FileCacheMetadata(etag: "v2"))
            stored["k\(index)"] = bytes
        }
        for index in stride(from: 2, to: 30, by: 5) {
            try cache.updateMetadata(FileCacheMetadata(etag: "v3"), forKey: "k\(index)")
        }
        try cache.store(testBytes(50, seed: 500), forKey: "café", metadata: FileCacheMetadata(etag: "v1"))
        stored["café"] = testBytes(50, seed: 500)
        return stored
    }

    private func expectedTag(_ key: String) -> String {
        guard let index = Int(key.dropFirst()) else { return "v1" }
        switch index % 5 {
        case 1: return "v2"
        case 2: return "v3"
        default: return "v1"
        }
    }

    /// Linux keeps 15 bytes of a thread's name and refuses a longer one; the opening's thread
    /// would then show the name of whichever thread opened the cache.
    @Test func theOpeningThreadsNameFitsWhatLinuxKeeps() {
        #expect(CacheStore.openingThreadName.utf8.count <= 15)
    }

    @Test(arguments: cases)
    func hitsBeforeTheReplayAreWhatTheReplayedIndexSays(_ testCase: Case) throws {
        try withTemporaryDirectory { root in
            let stored = try fillWithHistory(root, kind: testCase.kind)
            let cache = try reopen(root, testCase)
            let store = try cacheStore(of: cache)
            #expect(store.isOpening)
            var early: [String: FileCacheEntry] = [:]
            for key in stored.keys.sorted() {
                let entry = try #require(cache.entry(forKey: key))
                #expect(entry.metadata.etag == expectedTag(key), "\(key)")
                #expect(try cache.readData(for: entry) == stored[key], "\(key)")
                early[key] = entry
            }
            // "cafe\u{301}" is canonically equal to "café" as a String, but another key.
            #expect(store.isOpening, "every hit was served without the replay")
            // A removed key, and one never stored, are misses the journal is certain of.
            #expect(cache.entry(forKey: "k0") == nil)
            #expect(cache.entry(forKey: "cafe\u{301}") == nil)
            #expect(store.isOpening, "the misses were answered without the replay")
            store.finishOpening()
            #expect(cache.entry(forKey: "k0") == nil)
            #expect(cache.entry(forKey: "cafe\u{301}") == nil)
            for (key, entry) in early {
                #expect(cache.entry(forKey: key) == entry, "the replayed index agrees about \(key)")
            }
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aMissIsAnsweredBeforeTheReplayAndHitsServedEarlyCountAsUses(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                for index in 0..<10 {
                    try cache.store(testBytes(100, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
            }
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(cache.entry(forKey: "k3") != nil)
            #expect(cache.entry(forKey: "k1") != nil)
            #expect(store.isOpening)
            #expect(cache.entry(forKey: "absent") == nil)
            #expect(store.isOpening, "the miss was answered without the replay")
            store.finishOpening()
            // The early hits were applied as uses: most recent first.
            #expect(cache.entriesByRecency(limit: 2).map(\.key) == ["k1", "k3"])
            try (cache as? FileCache)?.flush()
            try (cache as? BigFileCache)?.flush()
            _ = consume cache
            let reopened = try kind.open(root)
            #expect(reopened.entriesByRecency(limit: 2).map(\.key) == ["k1", "k3"])
        }
    }

    /// After a crash (a session file left behind: on iOS, every launch after the app was killed
    /// in the background) the opening does not wait for the replay and the reconciliation either:
    /// hits are served from the journal at once, and the install reconciles index and files.
    @Test(arguments: CacheKind.allCases)
    func anOpeningAfterACrashServesHitsAtOnceAndReconcilesWhenTheReplayEnds(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            var lostFile: URL?
            do {
                let cache = try kind.open(root)
                for index in 0..<10 {
                    try cache.store(testBytes(100, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
                lostFile = cache.entry(forKey: "k7")?.fileURL
            }
            // What a killed instance leaves: its session file, a file it promoted but never
            // journaled, and an entry whose file it lost (its `removeAll` moved `ready/` aside).
            try FileManager.default.removeItem(at: try #require(lostFile))
            let stray = root.appendingPathComponent(kind == .single ? "ready/stray" : "ready/00/stray")
            try FileManager.default.createDirectory(at: stray.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("orphan".utf8).write(to: stray)
            try Data().write(to: root.appendingPathComponent("sessions/4242-killed"))

            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(store.isOpening, "the opening after a crash returned before the replay")
            let entry = try #require(cache.entry(forKey: "k4"))
            #expect(try cache.readData(for: entry) == testBytes(100, seed: 4))
            #expect(store.isOpening, "the hit was served from the journal")
            #expect(FileManager.default.fileExists(atPath: stray.path), "not reconciled yet")
            // The lost entry may be served before the reconciliation; reading it fails, typed.
            if let lost = cache.entry(forKey: "k7") {
                #expect(throws: FileCacheError.self) { try cache.readData(for: lost) }
            }
            // The lookup of the lost entry waited for the opening, which reconciled.
            #expect(cache.entry(forKey: "absent") == nil)
            store.finishOpening()
            #expect(!FileManager.default.fileExists(atPath: stray.path))
            #expect(cache.entry(forKey: "k7") == nil, "the reconciliation dropped the entry whose file is gone")
            #expect(try expectConsistent(cache, root: root).count == 9)
            #expect(cache.entriesByRecency(limit: 1).map(\.key) == ["k4"], "the early hit counted as a use")
        }
    }

    /// After a crash the background thread lists `ready/` before it locks anything: what another
    /// instance commits or removes between that listing and the install is neither lost nor left
    /// behind.
    @Test(arguments: CacheKind.allCases)
    func whatAnotherInstanceChangesAfterTheCrashListingIsReconciledRight(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                for index in 0..<5 {
                    try cache.store(testBytes(100, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
            }
            try Data().write(to: root.appendingPathComponent("sessions/4242-killed"))
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            let job = try #require(store.state.withLock { $0.opening })
            #expect(job.reconcilesCrash)
            let listed = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            job.pause(at: .beforeBackgroundInstall) {
                listed.signal()
                _ = proceed.wait(timeout: .now() + 30)
            }
            store.startOpening(job)
            #expect(listed.wait(timeout: .now() + 30) == .success, "ready/ listed, nothing locked yet")
            let other = try kind.open(root)
            try other.store(Data("new".utf8), forKey: "new", metadata: FileCacheMetadata())
            other.removeEntry(forKey: "k1")
            proceed.signal()

            let entries = try expectConsistent(cache, root: root)
            #expect(Set(entries.map(\.key)) == ["k0", "k2", "k3", "k4", "new"])
            let new = try #require(cache.entry(forKey: "new"))
            #expect(try cache.readData(for: new) == Data("new".utf8))
            withExtendedLifetime(other) {}
        }
    }

    /// The background thread installs the replayed index into the cache's state, never holding
    /// the cache: releasing the cache while that thread installs closes it before the release
    /// returns (its `deinit` waits for the install, then releases the session). A thread that held
    /// the cache would close it later, on its own, and an instance opened in between would find
    /// the directory still in use (a CI failure once: a crashed instance not reconciled).
    @Test(arguments: CacheKind.allCases)
    func releasingTheCacheWhileTheBackgroundThreadInstallsClosesItAtOnce(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                try cache.store(Data("a".utf8), forKey: "a", metadata: FileCacheMetadata())
            }
            var cache: (any FileCaching)? = try kind.open(root, replaysInBackground: false)
            weak var weakStore: CacheStore?
            let atInstall = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            do {
                let store = try cacheStore(of: try #require(cache))
                weakStore = store
                let job = try #require(store.state.withLock { $0.opening })
                job.pause(at: .beforeBackgroundInstall) {
                    atInstall.signal()
                    _ = proceed.wait(timeout: .now() + 30)
                }
                store.startOpening(job)
            }
            // The thread holds the decoded index and waits before installing it.
            #expect(atInstall.wait(timeout: .now() + 30) == .success)
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { proceed.signal() }
            cache = nil  // returns once the install is done and the cache closed
            #expect(weakStore == nil)
            let sessions = root.appendingPathComponent("sessions")
            #expect(try FileManager.default.contentsOfDirectory(atPath: sessions.path).isEmpty)
            let reopened = try kind.open(root)
            #expect(reopened.entry(forKey: "a") != nil)
        }
    }

    @Test(arguments: cases)
    func anExpiredEntryIsNotServedEarly(_ testCase: Case) throws {
        try withTemporaryDirectory { root in
            let clock = TestClock()
            do {
                let cache = try testCase.kind.open(root, maximumAge: 60, clock: clock)
                try cache.store(testBytes(100, seed: 1), forKey: "old", metadata: FileCacheMetadata())
                clock.advance(by: 50)
                try cache.store(testBytes(100, seed: 2), forKey: "young", metadata: FileCacheMetadata())
            }
            clock.advance(by: 20)
            let cache = try reopen(root, testCase, maximumAge: 60, clock: clock)
            let store = try cacheStore(of: cache)
            #expect(cache.entry(forKey: "young") != nil)
            #expect(store.isOpening)
            #expect(cache.entry(forKey: "old") == nil)
            #expect(!store.isOpening)
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func writesWaitForTheReplayAndTheLimitsHoldAtTheFirstCommit(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                for index in 0..<40 {
                    try cache.store(testBytes(1_000, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
            }
            // Reopened with a count limit the cache is over: a hit is served early, the first
            // commit finds the cache within the limit.
            let cache = try kind.open(root, countLimit: 10, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            #expect(cache.entry(forKey: "k39") != nil)
            #expect(store.isOpening)
            try cache.store(testBytes(1_000, seed: 99), forKey: "new", metadata: FileCacheMetadata())
            #expect(!store.isOpening)
            #expect(cache.statistics.count <= 11)
            #expect(cache.entry(forKey: "new") != nil)
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func whatAnotherInstanceWroteAfterTheOpeningIsFound(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                try cache.store(testBytes(100, seed: 1), forKey: "before", metadata: FileCacheMetadata())
                try cache.store(testBytes(100, seed: 2), forKey: "gone", metadata: FileCacheMetadata())
            }
            let first = try kind.open(root, replaysInBackground: false)
            let other = try kind.open(root)
            try other.store(testBytes(100, seed: 3), forKey: "after", metadata: FileCacheMetadata())
            other.removeEntry(forKey: "gone")
            // Served from the snapshot, as a hit on an index that has not caught up would be.
            let stale = try #require(first.entry(forKey: "gone"))
            #expect(throws: FileCacheError.corrupted(key: "gone")) { try first.readData(for: stale) }
            // Not in the snapshot: the lookup waits for the replay, which catches up.
            let after = try #require(first.entry(forKey: "after"))
            #expect(try first.readData(for: after) == testBytes(100, seed: 3))
            #expect(first.entry(forKey: "gone") == nil)
            #expect(try first.readData(for: try #require(first.entry(forKey: "before"))) == testBytes(100, seed: 1))
        }
    }

    @Test(arguments: cases)
    func verificationsMadeEarlyAreKept(_ testCase: Case) throws {
        let kind = testCase.kind
        try withTemporaryDirectory { root in
            let bytes = testBytes(8_000, seed: 4)
            var path = ""
            do {
                let cache = try kind.open(root)
                path = try cache.store(bytes, forKey: "k", metadata: FileCacheMetadata()).fileURL.path
            }
            // A verification is remembered once the file's timestamps have settled.
            let deadline = Date() + 10
            while Date() < deadline {
                let stamp = try #require(Posix.status(path).map(FileStamp.init))
                if Posix.wallClockNanoseconds() - stamp.changed > CacheStore.stampSettleNanoseconds { break }
                usleep(5_000)
            }
            let cache = try reopen(root, testCase)
            let store = try cacheStore(of: cache)
            let entry = try #require(cache.entry(forKey: "k"))
            #expect(try cache.readData(for: entry) == bytes)
            #expect(store.isOpening)
            #expect(store.peek("k")?.stamp != nil)
            #expect(cache.entry(forKey: "absent") == nil)
            store.finishOpening()
            #expect(store.peek("k")?.stamp == Posix.status(path).map(FileStamp.init))
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aCacheReleasedBeforeItsReplayClosesCleanly(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                try cache.store(testBytes(100, seed: 1), forKey: "k", metadata: FileCacheMetadata())
            }
            do {
                let cache = try kind.open(root, replaysInBackground: false)
                #expect(cache.entry(forKey: "k") != nil)
            }
            let sessions = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("sessions").path)
            #expect(sessions.isEmpty)
            let again = try kind.open(root)
            #expect(try expectConsistent(again, root: root).map(\.key) == ["k"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aDamagedJournalFoundByTheReplayIsRepaired(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            var stored: [String: Data] = [:]
            do {
                let cache = try kind.open(root)
                for index in 0..<40 {
                    let bytes = testBytes(100 + index, seed: UInt64(index))
                    try cache.store(bytes, forKey: "k\(index)", metadata: FileCacheMetadata())
                    stored["k\(index)"] = bytes
                }
            }
            // A flipped byte inside a record's payload: lengths intact, so a scan walks past it.
            let journal = root.appendingPathComponent("journal")
            var contents = try Data(contentsOf: journal)
            contents[contents.count / 2] ^= 0x40
            try contents.write(to: journal)
            let cache = try kind.open(root, replaysInBackground: false)
            for key in ["k0", "k39"] {
                if let entry = cache.entry(forKey: key), let data = try? cache.readData(for: entry) {
                    #expect(data == stored[key], "whatever is served is the key's own bytes")
                }
            }
            let entries = try expectConsistent(cache, root: root)
            #expect(entries.count < stored.count)
            for entry in entries { #expect(try cache.readData(for: entry) == stored[entry.key]) }
        }
    }

    @Test(arguments: CacheKind.allCases)
    func concurrentLookupsAndWritesDuringTheReplayStayConsistent(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try kind.open(root)
                for index in 0..<2_000 {
                    try cache.store(testBytes(64, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata())
                }
            }
            let cache = try kind.open(root, countLimit: 2_100)
            let failures = Counter()
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                for step in 0..<200 {
                    let index = (worker * 263 + step * 17) % 2_200
                    switch step % 4 {
                    case 0:
                        if (try? cache.store(testBytes(64, seed: UInt64(index)), forKey: "k\(index)", metadata: FileCacheMetadata()))
                            == nil
                        {
                            failures.increment()
                        }
                    case 1:
                        cache.removeEntry(forKey: "k\(index + 1)")
                    default:
                        if let entry = cache.entry(forKey: "k\(index)"), let data = try? cache.readData(for: entry),
                            data != testBytes(64, seed: UInt64(index))
                        {
                            failures.increment()
                        }
                    }
                }
            }
            #expect(failures.count == 0)
            #expect(cache.statistics.count <= 2_100)
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func whatWasWrittenAfterTheLookupTableIsFoundPastIt(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let stored = try fillWithHistory(root, kind: kind)  // closed: the table covers it all
            let path = root.appendingPathComponent("journal.lookup").path
            let table = try Data(contentsOf: URL(fileURLWithPath: path))
            var expected = stored
            do {
                // Small changes after the table: the closing instance keeps the table as it is.
                let cache = try kind.open(root)
                try cache.store(testBytes(77, seed: 77), forKey: "k3", metadata: FileCacheMetadata(etag: "v1"))
                expected["k3"] = testBytes(77, seed: 77)
                cache.removeEntry(forKey: "k4")
                expected["k4"] = nil
                try cache.updateMetadata(FileCacheMetadata(etag: "v3"), forKey: "k7")
                try cache.store(testBytes(78, seed: 78), forKey: "fresh", metadata: FileCacheMetadata(etag: "v1"))
                expected["fresh"] = testBytes(78, seed: 78)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == table, "the table was not rewritten")
            let cache = try reopen(root, Case(kind: kind, hint: .table))
            let store = try cacheStore(of: cache)
            for (key, bytes) in expected.sorted(by: { $0.key < $1.key }) {
                let entry = try #require(cache.entry(forKey: key), "\(key)")
                #expect(try cache.readData(for: entry) == bytes, "\(key)")
                let tag = ["k3", "fresh"].contains(key) ? "v1" : key == "k7" ? "v3" : expectedTag(key)
                #expect(entry.metadata.etag == tag, "\(key)")
            }
            #expect(store.isOpening, "every hit was served without the replay")
            #expect(cache.entry(forKey: "k4") == nil)
            try expectConsistent(cache, root: root)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aDamagedLookupTableNeverServesAWrongEntry(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let stored = try fillWithHistory(root, kind: kind)
            // Every slot's offsets moved to the next occupied slot, the header still valid: each
            // tag now points at another key's frames.
            let url = root.appendingPathComponent("journal.lookup")
            var table = try Data(contentsOf: url)
            let header = JournalLookupTable.headerSize
            let slots = lookupTableSlotCount(table)
            let occupied = (0..<slots).filter { slot in table[header + slot * 16..<header + slot * 16 + 4].contains { $0 != 0 } }
            let offsets = occupied.map { table[(header + $0 * 16 + 4)..<(header + $0 * 16 + 16)] }
            for (position, slot) in occupied.enumerated() {
                table.replaceSubrange(
                    (header + slot * 16 + 4)..<(header + slot * 16 + 16), with: offsets[(position + 1) % offsets.count])
            }
            try table.write(to: url)
            let cache = try reopen(root, Case(kind: kind, hint: .table))
            for key in stored.keys.sorted() {
                // A hit served early or after the replay: either way the key's own, current entry.
                let entry = try #require(cache.entry(forKey: key), "\(key)")
                #expect(try cache.readData(for: entry) == stored[key], "\(key)")
                #expect(entry.metadata.etag == expectedTag(key), "\(key)")
            }
            try expectConsistent(cache, root: root)
        }
    }
}
