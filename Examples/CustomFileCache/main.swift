import ExampleSupport
// A file cache written by the app and swapped into the manager: the smallest useful
// `FileCaching`, keeping each entry as one file named by a counter, with an in-memory index.
// (The shipped `FileCache` adds limits, LRU, a persisted index, crash safety and checksums.)
//
//     swift run CustomFileCache
import Foundation
import LoopbackServer
import ManagedCache

final class TinyFileCache: FileCaching {
    private let directory: URL
    private let index = Locked<[String: FileCacheEntry]>([:])
    private let counter = Locked<Int>(0)

    init(directory: URL) throws {
        self.directory = directory
        // Private: a folder only this user can enter, so no other account reads what it caches.
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func entry(forKey key: String) -> FileCacheEntry? { index.withLock { $0[key] } }

    func readData(for entry: FileCacheEntry) throws -> Data {
        guard let data = try? Data(contentsOf: entry.fileURL), data.count == entry.byteCount else {
            removeEntry(forKey: entry.key)
            throw FileCacheError.corrupted(key: entry.key)
        }
        return data
    }

    func makeWriter(forKey key: String) throws -> any FileCacheWriter {
        let number = counter.withLock {
            $0 += 1
            return $0
        }
        return Writer(cache: self, key: key, url: directory.appendingPathComponent("entry-\(number)"))
    }

    func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws {
        index.withLock { $0[key]?.metadata = metadata }
    }

    func removeEntry(forKey key: String) {
        if let entry = index.withLock({ $0.removeValue(forKey: key) }) { try? FileManager.default.removeItem(at: entry.fileURL) }
    }

    func removeAll() {
        for key in index.withLock({ Array($0.keys) }) { removeEntry(forKey: key) }
    }

    func trim() {}

    var statistics: FileCacheStatistics {
        index.withLock { FileCacheStatistics(count: $0.count, totalBytes: $0.values.reduce(0) { $0 + $1.byteCount }) }
    }

    fileprivate func add(_ entry: FileCacheEntry) {
        if let old = index.withLock({ $0.updateValue(entry, forKey: entry.key) }) { try? FileManager.default.removeItem(at: old.fileURL) }
    }

    /// Collects the bytes in memory and writes them with one atomic write on commit.
    private final class Writer: FileCacheWriter {
        let cache: TinyFileCache, key: String, url: URL
        let buffer = Locked(Data())

        init(cache: TinyFileCache, key: String, url: URL) { (self.cache, self.key, self.url) = (cache, key, url) }

        func write(_ chunk: Data) throws { buffer.withLock { $0.append(chunk) } }

        func commit(metadata: FileCacheMetadata) throws -> FileCacheEntry {
            let data = buffer.withLock { $0 }
            try data.write(to: url, options: .atomic)
            let entry = FileCacheEntry(key: key, fileURL: url, byteCount: data.count, createdAt: Date(), metadata: metadata)
            cache.add(entry)
            return entry
        }

        func abort() { buffer.withLock { $0 = Data() } }
    }
}

let server = try LoopbackServer()
server.setRoute("/greeting.txt", .ok(Data("hello from the network".utf8)))
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("TinyFileCacheExample-\(getpid())")
defer { try? FileManager.default.removeItem(at: directory) }

var configuration = ObjectManager.Configuration()
configuration.fileCache = try TinyFileCache(directory: directory)
let request = ObjectRequest(url: server.url("/greeting.txt"))

let first = try await ObjectManager(configuration: configuration).object(for: request, decoder: DataDecoder())
// A new manager (the next launch of the app) with the same file cache: no download this time.
let nextLaunch = ObjectManager(configuration: configuration)
let second = try await nextLaunch.object(for: request, decoder: DataDecoder())
print("first:  \(String(decoding: first, as: UTF8.self))")
print("second: \(String(decoding: second, as: UTF8.self))")
print(
    "HTTP requests: \(server.requestCount(for: "/greeting.txt")), file-cache hits on the next launch: "
        + "\(nextLaunch.statistics.fileCacheHits), entries in TinyFileCache: \(configuration.fileCache!.statistics.count)")
