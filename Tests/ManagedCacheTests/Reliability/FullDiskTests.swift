import Foundation
import TestSupport
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Both caches on a real, small file system that is full (a 4 MiB tmpfs, filled to its last
/// block), for each operation: removals free the space of what they remove and stay removed
/// after a reopen whether or not the journal can grow (its last block full, or with room), no
/// file is left that no entry names, an opening that fails leaves nothing behind, and a
/// download, a commit, a trim and a compaction that meet the full disk fail typed and lose
/// nothing. Skipped, with a message, where mounting a tmpfs is refused (not root, not Linux).
@Suite(.offCooperativePool, .serialized, .exclusiveOfChildProcesses) struct FullDiskTests {
    static let entrySize = 60_000
    static let keys = (0..<7).map { "key-\($0)" }

    /// A 4 MiB tmpfs with a cache directory on it, and the means to fill it.
    final class FullDisk {
        let directory = TemporaryDirectory(prefix: "full-disk")
        let tmpfs: DiskTroubleTests.Tmpfs
        let root: URL
        let filler: URL

        init?(_ name: String) {
            guard let tmpfs = DiskTroubleTests.mountTmpfs(bytes: 4 << 20, name: "full disk: " + name, directory: directory) else {
                return nil
            }
            self.tmpfs = tmpfs
            root = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("cache")
            filler = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("filler")
        }

        var freeBytes: Int { DiskTroubleTests.freeBytes(tmpfs.path) }

        /// Writes the filler until the file system refuses: not one block is free afterwards.
        func fill() {
            let descriptor = open(filler.path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            let block = [UInt8](repeating: 0x5A, count: 4_096)
            while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            var byte: UInt8 = 0
            while write(descriptor, &byte, 1) > 0 {}
        }

        deinit {
            // Before the temporary directory that holds the mount point is deleted.
            #if os(Linux)
            _ = umount2(tmpfs.path, Int32(MNT_DETACH))
            #endif
        }

        /// Gives the space back.
        func free() {
            try? FileManager.default.removeItem(at: filler)
        }

        /// The journal's size.
        var journalSize: Int {
            ((try? FileManager.default.attributesOfItem(atPath: root.appendingPathComponent("journal").path))?[.size] as? Int) ?? -1
        }

        /// Names in `sessions/`.
        var sessionFiles: [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("sessions").path)) ?? []
        }
    }

    /// Appends one `metadata` record to the journal so that it ends exactly on a block boundary:
    /// its last block full, the next record needs a new one. Needs free space (call before
    /// filling the disk).
    static func padJournalToABlockBoundary(_ cache: any FileCaching, disk: FullDisk, key: String) throws {
        try cacheStore(of: cache).flush()
        let size = disk.journalSize
        let target = (size + 200 + 4_095) / 4_096 * 4_096
        func recordSize(_ padding: Int) -> Int {
            var encoder = JournalEncoder()
            encoder.append(
                .metadata(key: key, version: 0, metadata: FileCacheMetadata(userInfo: ["p": String(repeating: "x", count: padding)])))
            return encoder.bytes.count
        }
        let padding = target - size - recordSize(0)
        try cache.updateMetadata(FileCacheMetadata(userInfo: ["p": String(repeating: "x", count: padding)]), forKey: key)
        #expect(disk.journalSize == target && disk.journalSize % 4_096 == 0, "journal \(disk.journalSize) B, wanted \(target)")
    }

    static func content(_ key: String, size: Int = entrySize) -> Data { testBytes(size, seed: UInt64(key.hashValue & 0xFFFF)) }

    /// A fresh tmpfs with a cache of `kind` on it holding `keys` (`entrySize` bytes each, or
    /// empty), closed again; nil where mounting is refused.
    static func prepared(_ kind: CacheKind, _ name: String, empty: Bool = false, clock: TestClock? = nil) throws -> FullDisk? {
        guard let disk = FullDisk("\(kind.testDescription): \(name)") else { return nil }
        let cache = try kind.open(disk.root, clock: clock)
        for key in keys { try cache.store(empty ? Data() : content(key), forKey: key, metadata: FileCacheMetadata()) }
        return disk
    }

    // MARK: Removals

    @Test(arguments: CacheKind.allCases, [true, false])
    func removingAnEntryOnAFullDiskFreesItsSpaceAndItStaysRemoved(kind: CacheKind, lastBlockFull: Bool) throws {
        guard let disk = try Self.prepared(kind, "removeEntry") else { return }
        var cache: (any FileCaching)? = try kind.open(disk.root)
        if lastBlockFull { try Self.padJournalToABlockBoundary(cache!, disk: disk, key: Self.keys[6]) }
        disk.fill()
        #expect(disk.freeBytes < 4_096)
        #expect(throws: FileCacheError.self) { try cache!.store(Self.content("more"), forKey: "more", metadata: FileCacheMetadata()) }

        cache!.removeEntry(forKey: Self.keys[0])
        try cache!.removeEntryReportingFailure(forKey: Self.keys[1])
        #expect(disk.freeBytes >= 2 * Self.entrySize - 8_192, "removing two entries freed \(disk.freeBytes) B")
        #expect(cache!.entry(forKey: Self.keys[0]) == nil && cache!.entry(forKey: Self.keys[1]) == nil)
        #expect(try expectConsistent(cache!, root: disk.root).count == 5)

        // Closed and reopened: they stay removed, and every file belongs to an entry.
        cache = nil
        cache = try kind.open(disk.root)
        #expect(cache!.entry(forKey: Self.keys[0]) == nil && cache!.entry(forKey: Self.keys[1]) == nil)
        #expect(Set(try expectConsistent(cache!, root: disk.root).map(\.key)) == Set(Self.keys.dropFirst(2)))

        // Space back: the removed key is stored again; after a clean close and reopen, nothing
        // is left that no entry names.
        disk.free()
        try cache!.store(Self.content(Self.keys[0], size: 1_000), forKey: Self.keys[0], metadata: FileCacheMetadata())
        cache = nil
        #expect(disk.sessionFiles.isEmpty, "a clean close left \(disk.sessionFiles)")
        cache = try kind.open(disk.root)
        #expect(try expectConsistent(cache!, root: disk.root).count == 6)
        #expect(try cache!.readData(for: #require(cache!.entry(forKey: Self.keys[0]))) == Self.content(Self.keys[0], size: 1_000))
    }

    /// Empty entries hold no block: deleting their files frees nothing, so the journal cannot
    /// record their removal at all. They must stay removed anyway (the next opening reconciles).
    @Test(arguments: CacheKind.allCases)
    func aRemovalTheJournalCannotRecordStillLasts(kind: CacheKind) throws {
        guard let disk = try Self.prepared(kind, "unrecordable removal", empty: true) else { return }
        var cache: (any FileCaching)? = try kind.open(disk.root)
        try Self.padJournalToABlockBoundary(cache!, disk: disk, key: Self.keys[6])
        disk.fill()
        let journalBefore = disk.journalSize
        try cache!.removeEntryReportingFailure(forKey: Self.keys[0])
        #expect(disk.journalSize == journalBefore, "the journal grew on a full disk")
        #expect(cache!.entry(forKey: Self.keys[0]) == nil)
        #expect(try expectConsistent(cache!, root: disk.root).count == 6)
        cache = nil
        #expect(!disk.sessionFiles.isEmpty, "the close did not mark the journal for reconciliation")
        cache = try kind.open(disk.root)
        #expect(cache!.entry(forKey: Self.keys[0]) == nil, "a removed entry came back after a reopen")
        #expect(Set(try expectConsistent(cache!, root: disk.root).map(\.key)) == Set(Self.keys.dropFirst()))
        // Space back: a clean close leaves a journal that needs no reconciliation.
        disk.free()
        cache = nil
        cache = try kind.open(disk.root)
        cache = nil
        #expect(disk.sessionFiles.isEmpty)
    }

    @Test(arguments: CacheKind.allCases, [false, true])
    func removeAllOnAFullDiskDeletesEverythingForGood(kind: CacheKind, empty: Bool) throws {
        guard let disk = try Self.prepared(kind, "removeAll", empty: empty) else { return }
        var cache: (any FileCaching)? = try kind.open(disk.root)
        try Self.padJournalToABlockBoundary(cache!, disk: disk, key: Self.keys[6])
        disk.fill()
        try cache!.removeAllReportingFailure()
        #expect(cache!.statistics.count == 0)
        #expect(readyFiles(disk.root).isEmpty)
        if !empty { #expect(disk.freeBytes >= Self.keys.count * Self.entrySize - 8_192, "removeAll freed \(disk.freeBytes) B") }
        #expect(try expectConsistent(cache!, root: disk.root).isEmpty)
        cache = nil
        cache = try kind.open(disk.root)
        for key in Self.keys { #expect(cache!.entry(forKey: key) == nil, "\(key) came back after a reopen") }
        #expect(try expectConsistent(cache!, root: disk.root).isEmpty)
        // The cache works once there is space again.
        disk.free()
        try cache!.store(Data("after".utf8), forKey: "after", metadata: FileCacheMetadata())
        #expect(try expectConsistent(cache!, root: disk.root).map(\.key) == ["after"])
    }

    @Test(arguments: CacheKind.allCases)
    func aTrimOnAFullDiskFreesWhatItEvicts(kind: CacheKind) throws {
        let clock = TestClock()
        guard let disk = try Self.prepared(kind, "trim", clock: clock) else { return }
        var cache: (any FileCaching)? = try kind.open(disk.root, maximumAge: 60, clock: clock)
        try Self.padJournalToABlockBoundary(cache!, disk: disk, key: Self.keys[6])
        disk.fill()
        clock.advance(by: 120)
        // A `BigFileCache` trim pass takes one tenth of the buckets: a rotation covers them all.
        for _ in 0..<(kind == .big ? 10 : 1) { cache!.trim() }
        #expect(cache!.statistics.count == 0)
        #expect(readyFiles(disk.root).isEmpty)
        #expect(disk.freeBytes >= Self.keys.count * Self.entrySize - 8_192, "the trim freed \(disk.freeBytes) B")
        cache = nil
        cache = try kind.open(disk.root, maximumAge: 60, clock: clock)
        #expect(try expectConsistent(cache!, root: disk.root).isEmpty)
    }

    /// Any sequence of removals and stores, with the disk full or not, and clean reopens: every
    /// file in `ready/` belongs to an entry, and no removed key comes back.
    @Test(arguments: CacheKind.allCases)
    func noFileIsLeftThatNoEntryNames(kind: CacheKind) throws {
        guard let disk = try Self.prepared(kind, "orphans", empty: false) else { return }
        var cache: (any FileCaching)? = try kind.open(disk.root)
        var removed: Set<String> = []
        for round in 0..<4 {
            if round % 2 == 0 { try Self.padJournalToABlockBoundary(cache!, disk: disk, key: Self.keys[6]) }
            disk.fill()
            let key = Self.keys[round]
            cache!.removeEntry(forKey: key)
            removed.insert(key)
            disk.free()
            if round == 1 {
                try cache!.store(Self.content(key, size: 500), forKey: key, metadata: FileCacheMetadata())
                removed.remove(key)
            }
            cache = nil
            cache = try kind.open(disk.root)
            let keys = Set(try expectConsistent(cache!, root: disk.root).map(\.key))
            #expect(keys.isDisjoint(with: removed), "round \(round): removed keys came back: \(keys.intersection(removed))")
        }
    }

    // MARK: Opening

    @Test(arguments: CacheKind.allCases)
    func anOpeningThatFailsOnAFullDiskLeavesNothingBehind(kind: CacheKind) throws {
        guard let disk = FullDisk("\(kind.testDescription): opening") else { return }
        disk.fill()
        let parent = URL(fileURLWithPath: disk.tmpfs.path).appendingPathComponent("new")
        let root = parent.appendingPathComponent("cache")
        #expect(throws: FileCacheError.io(operation: "compact index journal", errno: ENOSPC)) { _ = try kind.open(root) }
        #expect(!FileManager.default.fileExists(atPath: parent.path), "left: \(regularFiles(under: parent))")
        // And on an existing, empty directory: only what the opening created goes.
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        #expect(throws: FileCacheError.self) { _ = try kind.open(root) }
        #expect((try? FileManager.default.contentsOfDirectory(atPath: root.path)) == [])
        disk.free()
        let cache = try kind.open(root)
        try cache.store(Data("x".utf8), forKey: "x", metadata: FileCacheMetadata())
        #expect(try expectConsistent(cache, root: root).count == 1)
    }

    /// An existing cache opens on a full disk whose journal cannot grow, and serves its entries.
    @Test(arguments: CacheKind.allCases)
    func anExistingCacheOpensAndServesOnAFullDisk(kind: CacheKind) throws {
        guard let disk = try Self.prepared(kind, "existing") else { return }
        var cache: (any FileCaching)? = try kind.open(disk.root)
        try Self.padJournalToABlockBoundary(cache!, disk: disk, key: Self.keys[6])
        cache = nil
        disk.fill()
        cache = try kind.open(disk.root)
        for key in Self.keys {
            let entry = try #require(cache!.entry(forKey: key))
            #expect(try cache!.readData(for: entry) == Self.content(key))
        }
        #expect(try expectConsistent(cache!, root: disk.root).count == Self.keys.count)
    }

    // MARK: Writes and compaction

    @Test(arguments: CacheKind.allCases)
    func aDownloadThatFillsTheDiskFailsTypedAndLeavesNothing(kind: CacheKind) throws {
        guard let disk = try Self.prepared(kind, "download") else { return }
        let cache = try kind.open(disk.root)
        let writer = try cache.makeWriter(forKey: "big")
        var failure: FileCacheError?
        for _ in 0..<200 {
            do { try writer.write(Data(count: 64 << 10)) } catch let error as FileCacheError {
                failure = error
                break
            }
        }
        #expect(failure?.errno == ENOSPC, "\(String(describing: failure))")
        writer.abort()
        #expect(cache.entry(forKey: "big") == nil)
        #expect(try expectConsistent(cache, root: disk.root).count == Self.keys.count)
        try cache.store(Data("small".utf8), forKey: "small", metadata: FileCacheMetadata())
        #expect(try expectConsistent(cache, root: disk.root).count == Self.keys.count + 1)
    }

    /// The data is written, then the disk fills: the commit cannot journal the entry, so it
    /// fails typed, the file is taken back out of `ready/`, and its space is free again.
    @Test(arguments: CacheKind.allCases)
    func aCommitTheJournalRefusesTakesItsFileBack(kind: CacheKind) throws {
        guard let disk = try Self.prepared(kind, "commit") else { return }
        let cache = try kind.open(disk.root)
        try Self.padJournalToABlockBoundary(cache, disk: disk, key: Self.keys[6])
        let writer = try cache.makeWriter(forKey: "late")
        try writer.write(Self.content("late"))
        disk.fill()
        #expect(throws: FileCacheError.self) { try writer.commit(metadata: FileCacheMetadata()) }
        writer.abort()
        #expect(disk.freeBytes >= Self.entrySize - 4_096)
        #expect(cache.entry(forKey: "late") == nil)
        #expect(try expectConsistent(cache, root: disk.root).count == Self.keys.count)
    }

    @Test(arguments: CacheKind.allCases)
    func aCompactionOnAFullDiskKeepsTheJournalItHad(kind: CacheKind) throws {
        guard let disk = try Self.prepared(kind, "compaction") else { return }
        var cache: (any FileCaching)? = try kind.open(disk.root)
        disk.fill()
        do {
            let store = try cacheStore(of: cache!)
            let refused = store.state.withLock { state -> FileCacheError? in
                do throws(FileCacheError) {
                    try state._lockJournal()
                    defer { state._unlockJournal() }
                    try state._compact()
                } catch { return error }
                return nil
            }
            #expect(refused == .io(operation: "compact index journal", errno: ENOSPC))
        }
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: disk.root.path))?.filter { $0.hasPrefix("journal.tmp-") }
        #expect(leftovers == [])
        #expect(try expectConsistent(cache!, root: disk.root).count == Self.keys.count)
        cache = nil
        disk.free()
        cache = try kind.open(disk.root)
        #expect(try expectConsistent(cache!, root: disk.root).count == Self.keys.count)
    }
}
