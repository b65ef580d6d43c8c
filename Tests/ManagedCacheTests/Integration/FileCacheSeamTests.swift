import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// What `manage` asks of a file cache on the caller's thread goes through `FileCaching` alone:
/// a custom cache that answers those requirements gets the fast paths `FileCache` has, and one
/// that does not gets the defaults.
@Suite(.offCooperativePool) struct FileCacheSeamTests {
    /// A custom cache over `SimpleFileCache` that answers the caller's-thread requirements as told
    /// and counts them.
    final class AnsweringCache: FileCaching {
        let base: SimpleFileCache
        /// What `indexLacksEntry(forKey:)` answers.
        let lacksEverything: Bool
        /// Whether the bounded lookup answers `.busy`.
        let busy: Bool
        let boundedLookups = Counter()
        let plainLookups = Counter()
        let absenceQuestions = Counter()

        init(directory: URL, lacksEverything: Bool = false, busy: Bool = false) {
            base = SimpleFileCache(directory: directory)
            self.lacksEverything = lacksEverything
            self.busy = busy
        }

        func indexLacksEntry(forKey key: String) -> Bool {
            absenceQuestions.increment()
            return lacksEverything
        }

        func entry(forKey key: String, waitingAtMost seconds: Double) -> BoundedFileCacheAnswer<FileCacheEntry?> {
            boundedLookups.increment()
            return busy ? .busy : .answered(base.entry(forKey: key))
        }

        func entry(forKey key: String) -> FileCacheEntry? {
            plainLookups.increment()
            return base.entry(forKey: key)
        }
        func readData(for entry: FileCacheEntry) throws -> Data { try base.readData(for: entry) }
        func makeWriter(forKey key: String) throws -> any FileCacheWriter { try base.makeWriter(forKey: key) }
        func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws {
            try base.updateMetadata(metadata, forKey: key)
        }
        func removeEntry(forKey key: String) { base.removeEntry(forKey: key) }
        func removeAll() { base.removeAll() }
        func trim() { base.trim() }
        var statistics: FileCacheStatistics { base.statistics }
        func partialDownload(forKey key: String) -> PartialDownload? { base.partialDownload(forKey: key) }
        func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter {
            try base.makeWriter(resuming: partial)
        }
        func discardPartialDownload(forKey key: String) { base.discardPartialDownload(forKey: key) }
        func entriesByRecency(limit: Int) -> [FileCacheEntry] { base.entriesByRecency(limit: limit) }
        func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] { base.entriesUsedInPreviousSession(limit: limit) }
    }

    private func synchronousManager(_ cache: any FileCaching, loader: ScriptedDataLoader) -> ObjectManager {
        makeScriptedManager(loader: loader) {
            $0.fileCache = cache
            $0.policy.fileCacheDelivery = .synchronous
            $0.synchronousFileReadTimeBudget = .infinity
            $0.manageLockWaitBudget = .infinity
        }
    }

    @Test func aCustomCacheWithTheDefaultsDeliversASynchronousHitInsideManage() throws {
        let directory = TemporaryDirectory()
        let cache = SimpleFileCache(directory: directory.url)
        try cache.store(Data("disk".utf8), forKey: request("a").dataKey, metadata: FileCacheMetadata())
        let manager = synchronousManager(cache, loader: ScriptedDataLoader())
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(user.origins == [.fileCache], "the hit was not delivered inside manage")
    }

    @Test func aCustomCacheWhoseIndexLacksTheKeyIsNotReadInsideManage() async throws {
        let directory = TemporaryDirectory()
        let cache = AnsweringCache(directory: directory.url, lacksEverything: true)
        try cache.base.store(Data("disk".utf8), forKey: request("a").dataKey, metadata: FileCacheMetadata())
        let loader = ScriptedDataLoader()
        let manager = synchronousManager(cache, loader: loader)
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(cache.absenceQuestions.count == 1)
        #expect(cache.boundedLookups.count == 0, "manage read the cache on its own thread")
        // The load's task still looks the key up before downloading: the entry is found.
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        #expect(user.origins == [.fileCache])
        #expect(loader.requestCount("a") == 0)
    }

    @Test func aCustomCacheWhoseLockIsBusySendsTheReadToTheBackground() async throws {
        let directory = TemporaryDirectory()
        let cache = AnsweringCache(directory: directory.url, busy: true)
        try cache.base.store(Data("disk".utf8), forKey: request("a").dataKey, metadata: FileCacheMetadata())
        let loader = ScriptedDataLoader()
        let manager = synchronousManager(cache, loader: loader)
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(cache.boundedLookups.count == 1)
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        #expect(user.origins == [.fileCache])
        #expect(cache.plainLookups.count >= 1, "the load did not read the cache")
        #expect(loader.requestCount("a") == 0)
    }
}
