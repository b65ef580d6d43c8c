import Foundation
import TestSupport
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A changed, truncated, grown or missing file is detected on read, and the entry removed.
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheIntegrityTests {
    enum Damage: String, CaseIterable, Sendable {
        case flippedByte, truncated, grown, deleted
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var kind: CacheKind
        var damage: Damage
        var viaVerify: Bool
        var testDescription: String { "\(kind.testDescription), \(damage), \(viaVerify ? "verify" : "readData")" }
    }

    static let cases: [Case] = CacheKind.allCases.flatMap { kind in
        Damage.allCases.flatMap { damage in [false, true].map { Case(kind: kind, damage: damage, viaVerify: $0) } }
    }

    private func damage(_ url: URL, _ damage: Damage) throws {
        switch damage {
        case .flippedByte:
            let handle = try FileHandle(forUpdating: url)
            try handle.seek(toOffset: 1234)
            let byte = try #require(try handle.read(upToCount: 1))
            try handle.seek(toOffset: 1234)
            try handle.write(contentsOf: Data([byte[0] ^ 0x01]))
            try handle.close()
        case .truncated:
            let handle = try FileHandle(forUpdating: url)
            try handle.truncate(atOffset: 4000)
            try handle.close()
        case .grown:
            let handle = try FileHandle(forUpdating: url)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([0]))
            try handle.close()
        case .deleted:
            try FileManager.default.removeItem(at: url)
        }
    }

    @Test(arguments: cases)
    func damageIsDetectedAndTheEntryRemoved(_ testCase: Case) throws {
        try withTemporaryDirectory { root in
            let cache = try testCase.kind.open(root)
            let bytes = testBytes(8000, seed: 5)
            let entry = try cache.store(bytes, forKey: "victim", metadata: FileCacheMetadata())
            let other = try cache.store(bytes, forKey: "bystander", metadata: FileCacheMetadata())
            try damage(entry.fileURL, testCase.damage)
            #expect(throws: FileCacheError.corrupted(key: "victim")) {
                if testCase.viaVerify { try cache.verify(entry) } else { _ = try cache.readData(for: entry) }
            }
            #expect(cache.entry(forKey: "victim") == nil)
            #expect(!FileManager.default.fileExists(atPath: entry.fileURL.path))
            #expect(try cache.readData(for: other) == bytes)
            try cache.verify(other)
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["bystander"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func damageAfterARememberedVerificationIsStillDetected(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let bytes = testBytes(8000, seed: 6)
            let entry = try cache.store(bytes, forKey: "k", metadata: FileCacheMetadata())
            // A verification is only remembered once the file's timestamps are older than the
            // file system's tick; wait (bounded) for that condition, not for a fixed time.
            let path = entry.fileURL.path
            let deadline = Date() + 10
            while Date() < deadline {
                let stamp = try #require(Posix.status(path).map(FileStamp.init))
                if Posix.wallClockNanoseconds() - stamp.changed > CacheStore.stampSettleNanoseconds { break }
                usleep(5_000)
            }
            #expect(try cache.readData(for: entry) == bytes)
            let store = try cacheStore(of: cache)
            #expect(store.peek("k")?.stamp != nil)
            #expect(try cache.readData(for: entry) == bytes)  // served without a CRC
            try damage(entry.fileURL, .flippedByte)
            #expect(throws: FileCacheError.corrupted(key: "k")) { try cache.readData(for: entry) }
        }
    }

    /// Waits (bounded) until the file's timestamps are older than the file system's tick, the
    /// condition for a verification to be remembered.
    private func waitUntilSettled(_ url: URL) throws {
        let deadline = Date() + 10
        while Date() < deadline {
            let stamp = try #require(Posix.status(url.path).map(FileStamp.init))
            if Posix.wallClockNanoseconds() - stamp.changed > CacheStore.stampSettleNanoseconds { return }
            usleep(5_000)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aRememberedVerificationSurvivesReopeningAndDamageIsStillDetected(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let bytes = testBytes(8000, seed: 7)
            var fileURL: URL
            do {
                let cache = try kind.open(root)
                let entry = try cache.store(bytes, forKey: "k", metadata: FileCacheMetadata())
                _ = try cache.store(bytes, forKey: "unread", metadata: FileCacheMetadata())
                fileURL = entry.fileURL
                try waitUntilSettled(fileURL)
                #expect(try cache.readData(for: entry) == bytes)
            }
            do {
                // A new instance learns the verification from the journal; the unread entry has none.
                let cache = try kind.open(root)
                let store = try cacheStore(of: cache)
                let stamp = try #require(store.peek("k")?.stamp)
                #expect(stamp == Posix.status(fileURL.path).map(FileStamp.init))
                #expect(store.peek("unread")?.stamp == nil)
                let entry = try #require(cache.entry(forKey: "k"))
                #expect(try cache.readData(for: entry) == bytes)  // served without a CRC
                try damage(entry.fileURL, .flippedByte)
            }
            do {
                // Damage done behind a closed cache changes the stamp: the next instance checks.
                let cache = try kind.open(root)
                let entry = try #require(cache.entry(forKey: "k"))
                #expect(throws: FileCacheError.corrupted(key: "k")) { try cache.readData(for: entry) }
                #expect(cache.entry(forKey: "k") == nil)
            }
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aFileReplacedByACopyIsCheckedAgainAndANewVersionIsNotTrusted(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let bytes = testBytes(8000, seed: 8)
            do {
                let cache = try kind.open(root)
                let entry = try cache.store(bytes, forKey: "k", metadata: FileCacheMetadata())
                try waitUntilSettled(entry.fileURL)
                #expect(try cache.readData(for: entry) == bytes)
                try cacheStore(of: cache).flush()
            }
            let cache = try kind.open(root)
            let store = try cacheStore(of: cache)
            let entry = try #require(cache.entry(forKey: "k"))
            let remembered = try #require(store.peek("k")?.stamp)
            // Same bytes, another inode: the remembered stamp no longer matches, so the CRC runs
            // (and passes); a wrong copy would be caught the same way.
            let copy = root.appendingPathComponent("copy")
            try FileManager.default.copyItem(at: entry.fileURL, to: copy)
            #expect(rename(copy.path, entry.fileURL.path) == 0)
            #expect(Posix.status(entry.fileURL.path).map(FileStamp.init) != remembered)
            #expect(try cache.readData(for: entry) == bytes)
            // A new version of the key starts unverified, here and after reopening.
            _ = try cache.store(testBytes(9000, seed: 9), forKey: "k", metadata: FileCacheMetadata())
            #expect(store.peek("k")?.stamp == nil)
            try store.flush()
            #expect(try cacheStore(of: kind.open(root)).peek("k")?.stamp == nil)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func anEmptyEntryIsStoredAndRead(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let entry = try cache.store(Data(), forKey: "empty", metadata: FileCacheMetadata())
            #expect(try cache.readData(for: entry) == Data())
            try cache.verify(entry)
            try Data("x".utf8).write(to: entry.fileURL)
            #expect(throws: FileCacheError.corrupted(key: "empty")) { try cache.readData(for: entry) }
        }
    }

    /// Rewrites the journal at `root` as an older version wrote it: every entry's checksum a
    /// CRC-32 of its file (record type 2).
    private func rewriteJournalWithCRC32Checksums(_ root: URL) throws {
        let path = root.appendingPathComponent("journal").path
        let old = try Data(contentsOf: URL(fileURLWithPath: path))
        var encoder = JournalEncoder()
        var converted = 0
        let (_, damaged) = old.withUnsafeBytes { raw in
            JournalDecoder.decode(raw) { record, _ in
                guard case .add(var entry) = record else {
                    encoder.append(record)
                    return
                }
                let file = CacheLayout(root: root.path, kind: .single).path(for: entry.id)
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
                entry.checksum = .crc32(CRC32.checksum(bytes))
                encoder.append(.add(entry))
                converted += 1
            }
        }
        #expect(!damaged)
        #expect(converted == 2)
        try Data(encoder.bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func entriesOfAnOlderJournalKeepTheirCRC32AndDamageIsStillDetected() throws {
        try withTemporaryDirectory { root in
            let bytes = testBytes(8000, seed: 8)
            do {
                let cache = try CacheKind.single.open(root)
                _ = try cache.store(bytes, forKey: "k", metadata: FileCacheMetadata())
                _ = try cache.store(bytes, forKey: "other", metadata: FileCacheMetadata())
            }
            try rewriteJournalWithCRC32Checksums(root)
            let cache = try CacheKind.single.open(root)
            let store = try cacheStore(of: cache)
            let record = try #require(store.peek("k")?.record)
            #expect(record.checksum == .crc32(CRC32.checksum(bytes)))
            let entry = try #require(cache.entry(forKey: "k"))
            #expect(try cache.readData(for: entry) == bytes)
            let other = try #require(cache.entry(forKey: "other"))
            try cache.verify(other)
            try damage(entry.fileURL, .flippedByte)
            #expect(throws: FileCacheError.corrupted(key: "k")) { try cache.readData(for: entry) }
            try damage(other.fileURL, .flippedByte)
            #expect(throws: FileCacheError.corrupted(key: "other")) { try cache.verify(other) }
            // A new write of the key is checksummed with XXH64 (journal record type 8).
            _ = try cache.store(bytes, forKey: "k", metadata: FileCacheMetadata())
            #expect(store.peek("k").map { if case .xxh64 = $0.record.checksum { true } else { false } } == true)
            #expect(try cache.readData(for: try #require(cache.entry(forKey: "k"))) == bytes)
        }
    }
}
