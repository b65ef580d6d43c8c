import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// The time budget of a synchronous file-cache hit also bounds the wait for the file
/// cache's lock. A writer holding it (a journal compaction took 8 ms on the test machine) sends the
/// read to the background instead of holding up the thread that called `manage`.
@Suite(.offCooperativePool) struct SynchronousReadBudgetTests {
    @Test(arguments: CacheKind.allCases)
    func aSynchronousHitWhoseCacheIsHeldIsReadInTheBackground(kind: CacheKind) async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let fileCache = try kind.open(directory.url)
        _ = try await makeScriptedManager(loader: loader) { $0.fileCache = fileCache }
            .object(for: request("a"), decoder: BlobDecoder())
        let manager = makeScriptedManager(loader: loader) {
            $0.fileCache = fileCache
            $0.policy.fileCacheDelivery = .synchronous
            $0.synchronousFileReadTimeBudget = 0.05
        }
        let holding = MutexHolder(try cacheStore(of: fileCache))
        defer { holding.release() }
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        let returned = Lock(false)
        Thread.detachNewThread {
            manager.manage(user)
            returned.withLock { $0 = true }
        }
        // Without the bound, `manage` waits for the lock, which is released only after this.
        #expect(await waitUntil { returned.withLock { $0 } }, "manage waited for the file cache's lock")
        #expect(user.finalCallbackCount == 0)  // the background read waits for the lock meanwhile
        holding.release()
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        #expect(user.origins == [.fileCache])
        #expect(loader.requestCount("a") == 1)  // read from the cache, not downloaded again
    }

    /// "No limit" is what `.infinity` says: such a budget never runs out, and the hit is read and
    /// delivered inside `manage` (the Feed example counts on it).
    @Test(arguments: CacheKind.allCases)
    func anInfiniteBudgetReadsTheHitInsideManage(kind: CacheKind) throws {
        let directory = TemporaryDirectory()
        let fileCache = try kind.open(directory.url)
        try fileCache.store(Data("disk".utf8), forKey: request("a").dataKey, metadata: FileCacheMetadata())
        let manager = makeScriptedManager(loader: ScriptedDataLoader()) {
            $0.fileCache = fileCache
            $0.policy.fileCacheDelivery = .synchronous
            $0.synchronousFileReadTimeBudget = .infinity
            $0.manageLockWaitBudget = .infinity
        }
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(user.origins == [.fileCache], "the hit was not delivered inside manage")
    }

    /// `manage` decides a miss before its lock from this instance's index alone (no system call):
    /// an entry another instance stored meanwhile is then read by the load's task, from disk.
    @Test(arguments: CacheKind.allCases)
    func anEntryAnotherInstanceStoredIsReadFromDiskNotDownloaded(kind: CacheKind) async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("network".utf8)))
        let mine = try kind.open(directory.url, replaysInBackground: false)
        let other = try kind.open(directory.url, replaysInBackground: false)
        let manager = makeScriptedManager(loader: loader) {
            $0.fileCache = mine
            $0.policy.fileCacheDelivery = .synchronous
        }
        let key = request("a").dataKey
        #expect(mine.entry(forKey: key) == nil)  // and `mine` publishes what its index holds
        #expect(try cacheStore(of: mine).missShortcut.isAbsentFromIndex(key))
        try other.store(Data("disk".utf8), forKey: key, metadata: FileCacheMetadata())
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        #expect(user.origins == [.fileCache])
        #expect(user.objects.first?.bytes == Data("disk".utf8))
        #expect(loader.requestCount("a") == 0)
    }

    /// The synchronous read uses the record its lookup found (one acquisition of the cache's lock
    /// fewer); an entry removed in between is `corrupted`, as with a separate `readData(for:)`.
    @Test(arguments: CacheKind.allCases)
    func aReadRightAfterItsLookupUsesWhatTheLookupFound(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root, replaysInBackground: false)
            try cache.store(Data("first".utf8), forKey: "k", metadata: FileCacheMetadata())
            let store = try cacheStore(of: cache)
            guard case .answered(let found?) = store.entry(forKey: "k", waitingAtMost: 60) else {
                Issue.record("no entry found")
                return
            }
            #expect(found.current != nil, "a lookup in the index carries its record")
            #expect(try store.readData(found, waitingAtMost: 60) == Data("first".utf8))
            cache.removeEntry(forKey: "k")
            #expect(throws: FileCacheError.corrupted(key: "k")) { try store.readData(found, waitingAtMost: 60) }
        }
    }

    /// A decoder that takes 10 ms and records, per entry, whether it ran on the thread that
    /// called `manage` (marked in its thread dictionary).
    struct SlowDecoder: ObjectDecoding {
        static let callerKey = "SynchronousReadBudgetTests.caller"
        let onCaller = Lock<[Int: Bool]>([:])
        var identifier: String { "test.slow" }

        func decode(_ data: LoadedData) throws -> Blob {
            usleep(10_000)
            let onCaller = Thread.current.threadDictionary[Self.callerKey] != nil
            self.onCaller.withLock { $0[data.byteCount] = onCaller }
            return Blob(try data.bytes())
        }
    }

    /// Decoding inside `manage` is bounded too: once a decoder took longer than its budget on the
    /// caller's thread, its entries of that size or larger are decoded in the background (still
    /// from the file cache), and smaller ones still inside `manage`.
    @Test func aDecoderTooSlowInsideManageDecodesLargerEntriesInTheBackground() async throws {
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        for (name, size) in [("first", 100), ("larger", 200), ("smaller", 50)] {
            try fileCache.store(Data(count: size), forKey: request(name).dataKey, metadata: FileCacheMetadata())
        }
        let loader = ScriptedDataLoader()
        let manager = makeScriptedManager(loader: loader) {
            $0.fileCache = fileCache
            $0.policy.fileCacheDelivery = .synchronous
            $0.synchronousFileReadTimeBudget = .infinity
            $0.manageLockWaitBudget = .infinity
            $0.synchronousDecodeTimeBudget = 0.001
        }
        let decoder = SlowDecoder()
        var users: [RecordingUser<SlowDecoder>] = []
        for name in ["first", "larger", "smaller"] {
            let user = RecordingUser(request(name), decoder: decoder)
            users.append(user)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                Thread.current.threadDictionary[SlowDecoder.callerKey] = true
                manager.manage(user)
                done.signal()
            }
            done.wait()
            #expect(await waitUntil { user.finalCallbackCount == 1 })
            #expect(user.origins == [.fileCache])
        }
        #expect(decoder.onCaller.withLock { $0 } == [100: true, 200: false, 50: true])
        #expect(loader.requestCount("larger") == 0)
    }
}
