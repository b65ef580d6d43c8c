import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// Any key, however hostile, stays inside the cache root and never shares data with another key.
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheHostileKeyTests {
    /// At least 1,000 distinct keys (as UTF-8 byte strings): traversal, absolute paths, NUL
    /// bytes, separators, very long keys, Unicode look-alikes and random Unicode.
    static func hostileKeys() -> [String] {
        var keys: [String] = [
            "", ".", "..", "/", "//", "../", "../../etc/passwd", "../../../../../../../../tmp/escaped",
            "/etc/passwd", "/tmp/escaped", "~/escaped", "C:\\Windows\\System32", "\\\\server\\share",
            "a/b", "a_b", "a%2Fb", "a\\b", "a/../b", "./a", "a/./b", "ready", "loading", "journal", "lock",
            "dirty", "ready/00", "../ready", "\0", "a\0b", "\0../../escaped", "../\0/..", "\n", "\r\n", "\t",
            String(repeating: "x", count: 10_000), String(repeating: "../", count: 3_400),
            String(repeating: "é", count: 5_000), String(repeating: "/", count: 300),
            // Canonically equivalent pairs: equal as Swift Strings, different bytes, different keys.
            "caf\u{E9}", "cafe\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}", "\u{1E9B}\u{323}", "\u{17F}\u{323}\u{307}",
            // Look-alikes and invisible characters.
            "paypal", "p\u{430}yp\u{430}l", "ｐａｙｐａｌ", "pay\u{200B}pal", "pay\u{200D}pal", "\u{202E}lapyap",
            "ﬁle", "file", "\u{FF0F}etc\u{FF0F}passwd", "\u{2215}etc\u{2215}passwd", "..\u{2215}..\u{2215}escaped",
            "👨‍👩‍👧", "👨👩👧", "\u{FEFF}bom", "bom", "\u{FFFD}", "\u{10FFFF}",
        ]
        var generator = SplitMix(state: 42)
        let alphabet: [Unicode.Scalar] = ["/", ".", "\\", "\0", "a", "Z", "~", ":", "%", " ", "é", "\u{301}", "𝔘", "\u{202E}"]
        while keys.count < 1_200 {
            var key = ""
            for _ in 0..<(1 + Int(generator.next() % 40)) {
                if generator.next() % 3 == 0, let scalar = Unicode.Scalar(UInt32(generator.next() % 0x2FFFF)) {
                    key.unicodeScalars.append(scalar)
                } else {
                    key.unicodeScalars.append(alphabet[Int(generator.next() % UInt64(alphabet.count))])
                }
            }
            keys.append(key)
        }
        // Deduplicate by bytes, not by String equality (which would merge "café" and "cafe\u{301}").
        var seen = Set<[UInt8]>()
        return keys.filter { seen.insert(Array($0.utf8)).inserted }
    }

    private static func bytes(for key: String, index: Int) -> Data {
        var data = Data(key.utf8.prefix(64))
        data.append(testBytes(index % 97, seed: UInt64(index)))
        return data
    }

    @Test(arguments: CacheKind.allCases)
    func hostileKeysStayInsideTheRootAndNeverCollide(kind: CacheKind) throws {
        try withTemporaryDirectory { sandbox in
            let root = sandbox.appendingPathComponent("inner/cache")
            let keys = Self.hostileKeys()
            #expect(keys.count >= 1_000)
            #expect("caf\u{E9}" == "cafe\u{301}")  // why byte-wise keys matter
            do {
                let cache = try kind.open(root)
                for (index, key) in keys.enumerated() {
                    let entry = try cache.store(Self.bytes(for: key, index: index), forKey: key, metadata: FileCacheMetadata())
                    #expect(entry.key.utf8.elementsEqual(key.utf8))
                    #expect(entry.fileURL.standardizedFileURL.path.hasPrefix(root.standardizedFileURL.path + "/ready/"))
                }
                try checkAll(cache, keys: keys, root: root)
            }
            // The keys survive the index's round trip.
            let reopened = try kind.open(root)
            try checkAll(reopened, keys: keys, root: root)
            // Nothing was created outside the root.
            #expect(regularFiles(under: sandbox).allSatisfy { $0.hasPrefix("inner/cache/") })
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path) == ["inner"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.appendingPathComponent("inner").path) == ["cache"])
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aKeyTooLongForTheIndexIsRefusedAndTheCacheKeepsWorking(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let huge = String(repeating: "k", count: 2 << 20)
            #expect(throws: FileCacheError.self) { try cache.store(Data("x".utf8), forKey: huge, metadata: FileCacheMetadata()) }
            #expect(cache.entry(forKey: huge) == nil)
            try cache.store(Data("y".utf8), forKey: "fine", metadata: FileCacheMetadata())
            #expect(try expectConsistent(cache, root: root).map(\.key) == ["fine"])
        }
    }

    /// Two keys whose digests agree (the index files entries by the first 128 bits of the
    /// SHA-256 of the key; no such pair is known, so the journal is given one: an `add` record of
    /// the key "second" under the identity of "first", its file in place). The index holds one
    /// entry for the digest, and a lookup of "first" compares the key in its record and misses:
    /// a key never gets the bytes of another key.
    @Test(arguments: CacheKind.allCases)
    func aKeyNeverGetsTheEntryOfAnotherKeyWithTheSameDigest(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let second = Data("the second key's bytes".utf8)
            do {
                let cache = try kind.open(root, replaysInBackground: false)
                try cache.store(Data("the first key's bytes".utf8), forKey: "first", metadata: FileCacheMetadata())
                var id = FileID.makeNew(forKey: "first")
                id.version = 0x1234_5678_9ABC_DEF1
                let path = try cacheStore(of: cache).layout.path(for: id)
                #expect(FileManager.default.createFile(atPath: path, contents: second))
                var encoder = JournalEncoder()
                let checksum = second.withUnsafeBytes { XXH64.hash($0) }
                encoder.append(
                    .add(
                        EntryRecord(
                            key: "second", id: id, size: second.count, checksum: .xxh64(checksum),
                            created: Date().timeIntervalSinceReferenceDate, session: 1, metadata: FileCacheMetadata())))
                let journal = try FileHandle(forWritingTo: root.appendingPathComponent("journal"))
                try journal.seekToEnd()
                try journal.write(contentsOf: Data(encoder.bytes))
                try journal.close()
            }
            let reopened = try kind.open(root, replaysInBackground: false)
            #expect(reopened.statistics.count == 1, "one entry for the one digest")
            #expect(reopened.entry(forKey: "first") == nil, "the record under its digest is another key's")
            #expect(reopened.entry(forKey: "second") == nil, "its own digest has no entry")
            // The key works again once stored again.
            try reopened.store(Data("again".utf8), forKey: "first", metadata: FileCacheMetadata())
            let entry = try #require(reopened.entry(forKey: "first"))
            #expect(try reopened.readData(for: entry) == Data("again".utf8))
        }
    }

    private func checkAll(_ cache: any FileCaching, keys: [String], root: URL) throws {
        #expect(cache.statistics.count == keys.count)
        var files = Set<URL>()
        for (index, key) in keys.enumerated() {
            let entry = try #require(cache.entry(forKey: key))
            #expect(entry.key.utf8.elementsEqual(key.utf8))
            #expect(try cache.readData(for: entry) == Self.bytes(for: key, index: index))
            files.insert(entry.fileURL)
        }
        #expect(files.count == keys.count)
        let names = readyFiles(root).map { $0.split(separator: "/").last.map(String.init) ?? "" }
        #expect(names.count == keys.count)
        #expect(names.allSatisfy { $0.count == FileID.nameLength && $0.allSatisfy { "0123456789abcdef-".contains($0) } })
    }
}
