import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Misses answered without the store's mutex (`MissShortcut`), and never a miss for a
/// key that this instance or another one stored.
@Suite(.offCooperativePool) struct FileCacheMissShortcutTests {
    @Test(arguments: CacheKind.allCases)
    func aMissIsAnsweredWhileAWriterHoldsTheMutex(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root, replaysInBackground: false)
            try cache.store(Data("a".utf8), forKey: "a", metadata: FileCacheMetadata())
            let store = try cacheStore(of: cache)
            let holding = MutexHolder(store)
            defer { holding.release() }
            let answer = Lock<Bool?>(nil)
            Thread.detachNewThread {
                let found = cache.entry(forKey: "never stored") != nil
                answer.withLock { $0 = found }
            }
            // Without the shortcut the lookup waits for the mutex, which is only released after this.
            #expect(waitUntilBlocking { answer.withLock { $0 } != nil }, "the miss waited for the mutex")
            #expect(answer.withLock { $0 } == false)
            holding.release()
            #expect(cache.entry(forKey: "a") != nil)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func aKeyAnotherInstanceStoresIsFoundAfterThisOnePublished(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let writer = try kind.open(root, replaysInBackground: false)
            let reader = try kind.open(root, replaysInBackground: false)
            // Two misses: the first publishes, the second is answered from the publication.
            #expect(reader.entry(forKey: "x") == nil)
            #expect(reader.entry(forKey: "x") == nil)
            try writer.store(Data("x".utf8), forKey: "x", metadata: FileCacheMetadata())
            let found = try #require(reader.entry(forKey: "x"))
            #expect(try reader.readData(for: found) == Data("x".utf8))
            // A replaced journal (`removeAll` compacts it into a new file), then a new key.
            #expect(reader.entry(forKey: "y") == nil)
            writer.removeAll()
            try writer.store(Data("y".utf8), forKey: "y", metadata: FileCacheMetadata())
            #expect(reader.entry(forKey: "y") != nil)
        }
    }

    @Test(arguments: CacheKind.allCases)
    func liveKeysAreFoundAfterChurnRebuiltTheFilter(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root, replaysInBackground: false)
            let store = try cacheStore(of: cache)
            let firstFilter = store.state.withLock { $0.index.presence }
            // Keys of one shard of the filter, past a tenth of its 256 bits in additions: the
            // index rebuilds the shard from its live entries.
            let shard = 7
            let keys = Array(
                (0...).lazy.map { "k\($0)" }.filter { KeyPresenceFilter.shard(of: KeyPresenceFilter.hash($0)) == shard }.prefix(400))
            for (index, key) in keys.enumerated() {
                try cache.store(Data([UInt8(index & 0xFF)]), forKey: key, metadata: FileCacheMetadata())
                if index % 10 != 0 { cache.removeEntry(forKey: key) }
            }
            #expect(!firstFilter.needsRebuild(shard: shard), "the shard was not rebuilt")
            for (index, key) in keys.enumerated() where index % 10 == 0 {
                #expect(cache.entry(forKey: key) != nil, "\(key) lost")
            }
            #expect(cache.entry(forKey: keys[1]) == nil)
        }
    }

    @Test func aJournalOfAnotherSizeOrAnotherFileSendsTheLookupToTheIndex() throws {
        try withTemporaryDirectory { root in
            let path = root.appendingPathComponent("journal").path
            try Data(count: 100).write(to: URL(fileURLWithPath: path))
            let info = try #require(Posix.status(path))
            let shortcut = MissShortcut()
            #expect(!shortcut.isSurelyAbsent("k", journalPath: path), "nothing published yet")
            // Published during an append of 50 bytes: any size from 100 to 150 is this instance's.
            shortcut.publish(
                MissShortcut.Publication(
                    filter: KeyPresenceFilter(), device: UInt64(truncatingIfNeeded: info.st_dev),
                    inode: UInt64(truncatingIfNeeded: info.st_ino), journalSizes: 100...150))
            #expect(shortcut.isSurelyAbsent("k", journalPath: path))
            try Data(count: 120).write(to: URL(fileURLWithPath: path))  // same file, rewritten in place
            #expect(try #require(Posix.status(path)).st_ino == info.st_ino)
            #expect(shortcut.isSurelyAbsent("k", journalPath: path))
            try Data(count: 151).write(to: URL(fileURLWithPath: path))
            #expect(!shortcut.isSurelyAbsent("k", journalPath: path), "another instance appended")
            // Another file at the path (a compaction by another instance). The store keeps its
            // journal open, as here, so the new file cannot be given the old one's inode number.
            let keptOpen = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? keptOpen.close() }
            try FileManager.default.removeItem(atPath: path)
            try Data(count: 120).write(to: URL(fileURLWithPath: path))
            #expect(!shortcut.isSurelyAbsent("k", journalPath: path), "the journal was replaced")
            shortcut.publish(nil)
            #expect(!shortcut.isSurelyAbsent("k", journalPath: path), "withdrawn")
        }
    }

    @Test func theFilterNeverForgetsAnAddedKeyAndRebuildsToExactlyTheLiveOnes() {
        let filter = KeyPresenceFilter()
        let added = (0..<5_000).map { "https://example.com/\($0)" }
        for key in added { filter.add(hash: KeyPresenceFilter.hash(key)) }
        #expect(added.allSatisfy { filter.mayContain(hash: KeyPresenceFilter.hash($0)) })
        let shards = 0..<KeyPresenceFilter.shardCount
        #expect(shards.contains { filter.needsRebuild(shard: $0) })
        let live = Array(added.prefix(100))
        for shard in shards {
            let hashes = live.map(KeyPresenceFilter.hash).filter { KeyPresenceFilter.shard(of: $0) == shard }
            filter.rebuild(shard: shard, fromHashes: hashes, count: hashes.count)
        }
        #expect(!shards.contains { filter.needsRebuild(shard: $0) })
        #expect(live.allSatisfy { filter.mayContain(hash: KeyPresenceFilter.hash($0)) })
        // The other 4,900 are gone but for false "maybe"s: about 1.5 % at 16 bits a key.
        let maybes = added.dropFirst(100).filter { filter.mayContain(hash: KeyPresenceFilter.hash($0)) }.count
        #expect(maybes < 4_900 / 10, "\(maybes) false maybes")
    }
}
