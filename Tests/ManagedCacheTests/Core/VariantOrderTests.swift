import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// An ordered log of what happened, from any thread.
private final class OrderLog: Sendable {
    private let entries = Lock<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A decoder that stores its object as a variant (as an image format does): the bytes, reversed.
private struct ReversingDecoder: ObjectDecoding {
    var identifier: String { "reversed" }
    var storesVariant: Bool { true }
    func decode(_ data: LoadedData) throws -> Blob {
        let bytes = try data.bytes()
        return Blob(data.isStoredVariant ? bytes : Data(bytes.reversed()))
    }
    func encodedVariant(of object: Blob) -> Data? { object.bytes }
}

/// A file cache that logs every variant it stores, and whether that happened on the main queue.
private final class VariantLoggingFileCache: FileCaching {
    let base: SimpleFileCache
    let log: OrderLog

    init(_ base: SimpleFileCache, log: OrderLog) {
        self.base = base
        self.log = log
    }

    func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata) throws -> FileCacheEntry {
        if key.contains("\u{1E}variant=") { log.append(MainQueueMarker.isOnMainQueue ? "stored on main" : "stored") }
        return try base.store(data, forKey: key, metadata: metadata)
    }

    func entry(forKey key: String) -> FileCacheEntry? { base.entry(forKey: key) }
    func readData(for entry: FileCacheEntry) throws -> Data { try base.readData(for: entry) }
    func verify(_ entry: FileCacheEntry) throws { try base.verify(entry) }
    func makeWriter(forKey key: String) throws -> any FileCacheWriter { try base.makeWriter(forKey: key) }
    func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws { try base.updateMetadata(metadata, forKey: key) }
    func removeEntry(forKey key: String) { base.removeEntry(forKey: key) }
    func removeAll() { base.removeAll() }
    func trim() { base.trim() }
    var statistics: FileCacheStatistics { base.statistics }
    func partialDownload(forKey key: String) -> PartialDownload? { base.partialDownload(forKey: key) }
    func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter { try base.makeWriter(resuming: partial) }
    func discardPartialDownload(forKey key: String) { base.discardPartialDownload(forKey: key) }
    func entriesByRecency(limit: Int) -> [FileCacheEntry] { base.entriesByRecency(limit: limit) }
    func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] { base.entriesUsedInPreviousSession(limit: limit) }
}

/// A main-actor user of the reversing decoder that logs its delivery.
@MainActor private final class VariantView: MainActorObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder = ReversingDecoder()
    let log: OrderLog
    var shown: Blob?

    init(_ request: ObjectRequest, log: OrderLog) {
        objectRequest = request
        self.log = log
    }

    func managedObjectReady(_ object: Blob, origin: DataOrigin, request: ObjectRequest) {
        shown = object
        log.append("delivered")
    }
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { log.append("failed") }
}

/// A decoded variant reaches its users before it is stored, and is stored off the
/// main thread.
@Suite(.offCooperativePool) struct VariantOrderTests {
    @Test func aDownloadedVariantIsDeliveredBeforeItIsStored() async {
        let directory = TemporaryDirectory()
        let log = OrderLog()
        let loader = ScriptedDataLoader()
        loader.script("v", .body(Data("abc".utf8)))
        let manager = makeScriptedManager(loader: loader) {
            $0.fileCache = VariantLoggingFileCache(SimpleFileCache(directory: directory.url), log: log)
        }
        let user = ObjectUser(request: request("v"), decoder: ReversingDecoder()) { _, _ in log.append("delivered") }
        manager.manage(user)
        #expect(await waitUntil { log.all.count == 2 })
        #expect(log.all == ["delivered", "stored"])
        #expect(user.object?.text == "cba")
    }

    @MainActor @Test func aVariantMadeFromASynchronousFileHitOnTheMainActorIsStoredAfterwardsOffIt() async throws {
        let directory = TemporaryDirectory()
        let log = OrderLog()
        let base = SimpleFileCache(directory: directory.url)
        _ = try base.store(Data("xyz".utf8), forKey: request("v").dataKey, metadata: FileCacheMetadata())
        let manager = makeScriptedManager(loader: ScriptedDataLoader()) {
            $0.fileCache = VariantLoggingFileCache(base, log: log)
            $0.policy.fileCacheDelivery = .synchronous
        }
        let view = VariantView(request("v"), log: log)
        manager.manage(view)
        // Read, decoded and shown before `manage` returned...
        #expect(view.shown?.text == "zyx")
        // ...and the variant stored after, on the loading executor.
        #expect(await waitOnMainActor { log.all.count == 2 })
        #expect(log.all == ["delivered", "stored"])
    }
}
