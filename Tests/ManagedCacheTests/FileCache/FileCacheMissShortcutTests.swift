import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Misses answered without the store's mutex (`MissShortcut`, issue 20), and never a miss for a
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
            // Past a tenth of the filter's 1,024 bits in additions: the next operation rebuilds it.
            for index in 0..<400 {
                try cache.store(Data([UInt8(index & 0xFF)]), forKey: "k\(index)", metadata: FileCacheMetadata())
                if index % 10 != 0 { cache.removeEntry(forKey: "k\(index)") }
            }
            #expect(!firstFilter.needsRebuild, "the filter was not rebuilt")
            for index in stride(from: 0, to: 400, by: 10) {
                #expect(cache.entry(forKey: "k\(index)") != nil, "k\(index) lost")
            }
            #expect(cache.entry(forKey: "k1") == nil)
        }
    }

    @Test func theFilterNeverForgetsAnAddedKeyAndRebuildsToExactlyTheLiveOnes() {
        let filter = KeyPresenceFilter()
        let added = (0..<5_000).map { "https://example.com/\($0)" }
        for key in added { filter.add(key) }
        #expect(added.allSatisfy { filter.mayContain(hash: KeyPresenceFilter.hash($0)) })
        #expect(filter.needsRebuild)
        let live = Array(added.prefix(100))
        filter.rebuild(from: live, count: live.count)
        #expect(!filter.needsRebuild)
        #expect(live.allSatisfy { filter.mayContain(hash: KeyPresenceFilter.hash($0)) })
        // The other 4,900 are gone but for false "maybe"s: about 1.5 % at 16 bits a key.
        let maybes = added.dropFirst(100).filter { filter.mayContain(hash: KeyPresenceFilter.hash($0)) }.count
        #expect(maybes < 4_900 / 10, "\(maybes) false maybes")
    }
}

/// Holds a store's mutex on a thread of its own until released, as a writer appending to the
/// journal would.
private final class MutexHolder: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let once = Lock(false)

    init(_ store: CacheStore) {
        let held = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [released] in
            store.state.withLock { _ in
                held.signal()
                released.wait()
            }
        }
        held.wait()
    }

    /// Lets the mutex go (once; later calls do nothing).
    func release() {
        let first = once.withLock { done in
            defer { done = true }
            return !done
        }
        if first { released.signal() }
    }
}
