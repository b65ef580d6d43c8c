import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// A manager over the scripted loader with a file cache.
private func makeManager(
    loader: ScriptedDataLoader, fileCache: any FileCaching,
    configure: (inout ObjectManager.Configuration) -> Void = { _ in }
) -> ObjectManager {
    makeScriptedManager(loader: loader) {
        $0.fileCache = fileCache
        configure(&$0)
    }
}

@Suite(.offCooperativePool) struct FileCacheIntegrationTests {
    @Test func secondManagerOnTheSameDirectoryLoadsFromDisk() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("from the network".utf8)))
        _ = try await makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
            .object(for: request("a"), decoder: BlobDecoder())
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        let later = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        later.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.origins == [.fileCache])
        #expect(loader.requestCount("a") == 1)
    }

    @Test func synchronousFileCacheDeliveryArrivesBeforeManageReturns() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let fileCache = try FileCache(directory: directory.url)
        _ = try await makeManager(loader: loader, fileCache: fileCache).object(for: request("a"), decoder: BlobDecoder())
        let manager = makeManager(loader: loader, fileCache: fileCache) { $0.policy.fileCacheDelivery = .synchronous }
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(user.origins == [.fileCache])  // no waiting
    }

    /// A synchronous file-cache hit stays within its budget. Over the size limit, the
    /// entry is read in the background (still from disk, no request); a read that took longer than
    /// the time budget is decoded and delivered in the background.
    @Test func aSynchronousFileHitOverItsBudgetIsDeliveredInTheBackground() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("small", .body(Data(repeating: 1, count: 100)))
        loader.script("large", .body(Data(repeating: 2, count: 5_000)))
        let fileCache = try FileCache(directory: directory.url)
        let writer = makeManager(loader: loader, fileCache: fileCache)
        for path in ["small", "large"] { _ = try await writer.object(for: request(path), decoder: BlobDecoder()) }

        let sized = makeManager(loader: loader, fileCache: fileCache) {
            $0.policy.fileCacheDelivery = .synchronous
            $0.synchronousFileReadLimit = 1_000
            $0.synchronousFileReadTimeBudget = 3_600  // only the size decides here, however busy the machine
            $0.manageLockWaitBudget = 3_600
        }
        // Which task decoded tells where: this test's task (inside `manage`) or a loading task.
        let callerTask = withUnsafeCurrentTask { $0?.hashValue }
        #expect(callerTask != nil)
        let decoder = TaskRecordingDecoder()
        let small = RecordingUser(request("small"), decoder: decoder)
        sized.manage(small)
        #expect(small.origins == [.fileCache])  // within the budget: before manage returned
        let large = RecordingUser(request("large"), decoder: decoder)
        sized.manage(large)
        #expect(await waitUntil { large.finalCallbackCount == 1 })
        #expect(large.origins == [.fileCache])
        #expect(large.objects.first?.count == 5_000)
        #expect(decoder.tasks.count == 2)
        #expect(decoder.tasks.first == callerTask)
        #expect(decoder.tasks.last != callerTask)

        let timed = makeManager(loader: loader, fileCache: fileCache) {
            $0.policy.fileCacheDelivery = .synchronous
            $0.synchronousFileReadTimeBudget = 0  // every read is over it
        }
        let timedDecoder = TaskRecordingDecoder()
        let slow = RecordingUser(request("small"), decoder: timedDecoder)
        timed.manage(slow)
        #expect(await waitUntil { slow.finalCallbackCount == 1 })
        #expect(slow.origins == [.fileCache])
        #expect(timedDecoder.tasks.count == 1 && timedDecoder.tasks.first != callerTask)
        #expect(loader.requestCount("small") == 1 && loader.requestCount("large") == 1)  // never downloaded again
    }

    @Test func anAwaitedSmallFileHitIsDecodedInTheCallersTaskALargeOneInTheBackground() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("small", .body(Data(repeating: 1, count: 100)))
        loader.script("large", .body(Data(repeating: 2, count: 5_000)))
        let fileCache = try FileCache(directory: directory.url)
        let configure = { (configuration: inout ObjectManager.Configuration) in
            configuration.inMemoryThreshold = 1_000
            configuration.synchronousFileReadTimeBudget = 3_600  // only the size decides here, however busy the machine
            configuration.manageLockWaitBudget = 3_600
        }
        let writer = makeManager(loader: loader, fileCache: fileCache, configure: configure)
        for path in ["small", "large"] { _ = try await writer.object(for: request(path), decoder: BlobDecoder()) }

        let manager = makeManager(loader: loader, fileCache: fileCache, configure: configure)
        let decodingTasks = TaskRecordingDecoder()
        let callerTask = withUnsafeCurrentTask { $0?.hashValue }
        #expect(callerTask != nil)
        for path in ["small", "large"] {
            let object = try await manager.object(for: request(path), decoder: decodingTasks)
            #expect(object.count == (path == "small" ? 100 : 5_000))
        }
        #expect(decodingTasks.tasks == [callerTask, decodingTasks.tasks.last!])
        #expect(decodingTasks.tasks.last! != callerTask)  // the large entry: a fetch task of its own
        #expect(manager.statistics.fileCacheHits == 2)
        #expect(loader.requestCount("small") == 1 && loader.requestCount("large") == 1)
        // Asked for explicitly, the background lookup is kept even for a small entry.
        let background = makeManager(loader: loader, fileCache: fileCache, configure: configure)
        var explicit = request("small")
        explicit.policy.fileCacheDelivery = .asynchronous
        _ = try await background.object(for: explicit, decoder: decodingTasks)
        #expect(decodingTasks.tasks.count == 3 && decodingTasks.tasks[2] != callerTask)
    }

    @Test func customFileCacheSwapsIn() async throws {
        let directory = TemporaryDirectory()
        let custom = SimpleFileCache(directory: directory.url)
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeManager(loader: loader, fileCache: custom)
        _ = try await manager.object(for: request("a"), decoder: BlobDecoder())
        manager.removeAllObjects()
        let again = try await manager.object(for: request("a"), decoder: BlobDecoder())
        #expect(again.text == "A")
        #expect(custom.commits.count == 1)
        #expect(custom.hits.count >= 1)
        #expect(loader.requestCount("a") == 1)
    }

    @Test func corruptedFileIsDetectedAndReloadedFromTheNetwork() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data(repeating: 7, count: 4_096)))
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeManager(loader: loader, fileCache: fileCache)
        _ = try await manager.object(for: request("a"), decoder: BlobDecoder())
        let entry = try #require(fileCache.entry(forKey: request("a").dataKey))
        let handle = try FileHandle(forWritingTo: entry.fileURL)
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        manager.removeAllObjects()
        let reloaded = try await manager.object(for: request("a"), decoder: BlobDecoder())
        #expect(reloaded.bytes == Data(repeating: 7, count: 4_096))
        #expect(loader.requestCount("a") == 2)
        #expect(manager.statistics.fileCacheErrors >= 1)
    }

    @Test func decodeFailurePurgesTheFileCacheEntry() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("bad", .body(Data("BAD".utf8)))
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeManager(loader: loader, fileCache: fileCache)
        await #expect(throws: ManagedCacheError.self) {
            _ = try await manager.object(for: request("bad"), decoder: BlobDecoder())
        }
        #expect(await waitUntil { fileCache.entry(forKey: request("bad").dataKey) == nil })
    }

    @Test func rawDataIsCachedEvenWhenNobodyDecodesIt() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("p", .body(Data("P".utf8)))
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeManager(loader: loader, fileCache: fileCache)
        manager.prefetch([request("p")])
        #expect(await waitUntil { fileCache.entry(forKey: request("p").dataKey) != nil })
        #expect(manager.statistics.decodes == 0)
    }

    @Test func preloadAllFillsTheMemoryCacheFromDisk() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        for index in 0..<5 { loader.script("e\(index)", .body(Data("entry \(index)".utf8))) }
        let first = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        for index in 0..<5 { _ = try await first.object(for: request("e\(index)"), decoder: BlobDecoder()) }

        let manager = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        let preloaded = await manager.preloadFromFileCache(.all, decoder: BlobDecoder()).value
        #expect(preloaded == 5)
        #expect(manager.memoryCache.count == 5)
        let user = RecordingUser(request("e3"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(user.origins == [.memory])
        #expect(loader.totalRequests == 5)
        #expect(manager.statistics.preloadedObjects == 5)
    }

    @Test func preloadLastSessionTakesOnlyWhatThePreviousSessionUsed() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        for path in ["a", "b", "c"] { loader.script(path, .body(Data(path.utf8))) }
        let session1 = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        for path in ["a", "b"] { _ = try await session1.object(for: request(path), decoder: BlobDecoder()) }
        let session2 = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        _ = try await session2.object(for: request("c"), decoder: BlobDecoder())

        let session3 = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        let preloaded = await session3.preloadFromFileCache(.lastSession, decoder: BlobDecoder()).value
        #expect(preloaded == 1)
        #expect(session3.cachedObject(for: request("c"), decoder: BlobDecoder())?.text == "c")
        #expect(session3.cachedObject(for: request("a"), decoder: BlobDecoder()) == nil)
    }

    @Test func preloadStopsWhenARealRequestNeedsTheDisk() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        for index in 0..<20 { loader.script("e\(index)", .body(Data("entry \(index)".utf8))) }
        loader.script("urgent", .body(Data("urgent".utf8)))
        let first = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        for index in 0..<20 { _ = try await first.object(for: request("e\(index)"), decoder: BlobDecoder()) }

        let manager = makeManager(loader: loader, fileCache: try FileCache(directory: directory.url))
        let urgent = RecordingUser(request("urgent"), decoder: BlobDecoder())
        let decodes = Counter()
        // The first preloaded decode makes a real request, which must stop the preload.
        let interrupting = InterruptingDecoder(decodes: decodes) { manager.manage(urgent) }
        let preloaded = await manager.preloadFromFileCache(.all, decoder: interrupting).value
        #expect(preloaded <= 1)
        #expect(decodes.count == 1)
        #expect(await waitUntil { urgent.objects.count == 1 })
    }
}

/// Decodes like `BlobDecoder`, running `onFirstDecode` the first time.
private struct InterruptingDecoder: ObjectDecoding {
    let decodes: Counter
    let onFirstDecode: @Sendable () -> Void

    var identifier: String { "test.blob.blob" }

    func decode(_ data: LoadedData) throws -> Blob {
        decodes.increment()
        if decodes.count == 1 { onFirstDecode() }
        return Blob(try data.bytes())
    }
}

/// Decodes bytes as they are and records the task each decode ran in.
private final class TaskRecordingDecoder: ObjectDecoding, Sendable {
    private let recorded = Lock<[Int?]>([])

    var identifier: String { "test.task-recording" }

    var tasks: [Int?] { recorded.withLock { $0 } }

    func decode(_ data: LoadedData) throws -> Data {
        let task = withUnsafeCurrentTask { $0?.hashValue }
        recorded.withLock { $0.append(task) }
        return try data.bytes()
    }
}
