import Foundation
import ManagedCache
import ManagedCacheLocking

/// The smallest useful `FileCaching`: one file per entry in a directory, an in-memory index,
/// a CRC per entry, no limits. Tests use it to prove the manager works with a file cache it did
/// not ship, and to count what was stored.
public final class SimpleFileCache: FileCaching {
    private struct Stored {
        var entry: FileCacheEntry
        var checksum: UInt32
    }

    private let directory: URL
    private let entries = Lock<[String: Stored]>([:])
    private let partials = Lock<[String: (PartialDownload, Data)]>([:])
    private let counter = Lock(0)
    /// How many lookups found an entry.
    public let hits = Counter()
    /// How many entries were committed.
    public let commits = Counter()

    public init(directory: URL) {
        self.directory = directory
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    public func entry(forKey key: String) -> FileCacheEntry? {
        let entry = entries.withLock { $0[key]?.entry }
        if entry != nil { hits.increment() }
        return entry
    }

    public func readData(for entry: FileCacheEntry) throws -> Data {
        let expected = entries.withLock { $0[entry.key]?.checksum }
        guard let data = try? Data(contentsOf: entry.fileURL), let expected, CRC32.checksum(data) == expected,
            data.count == entry.byteCount
        else {
            removeEntry(forKey: entry.key)
            throw FileCacheError.corrupted(key: entry.key)
        }
        return data
    }

    public func verify(_ entry: FileCacheEntry) throws { _ = try readData(for: entry) }

    public func makeWriter(forKey key: String) throws -> any FileCacheWriter {
        let number = counter.withLock { value -> Int in
            value += 1
            return value
        }
        return Writer(cache: self, key: key, url: directory.appendingPathComponent("entry-\(number)"))
    }

    @discardableResult
    public func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata) throws -> FileCacheEntry {
        let writer = try makeWriter(forKey: key)
        try writer.write(data)
        return try writer.commit(metadata: metadata)
    }

    public func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws {
        entries.withLock { $0[key]?.entry.metadata = metadata }
    }

    public func removeEntry(forKey key: String) {
        if let stored = entries.withLock({ $0.removeValue(forKey: key) }) {
            try? FileManager.default.removeItem(at: stored.entry.fileURL)
        }
    }

    public func removeAll() {
        let all = entries.withLock { entries -> [Stored] in
            defer { entries.removeAll() }
            return Array(entries.values)
        }
        for stored in all { try? FileManager.default.removeItem(at: stored.entry.fileURL) }
    }

    public func trim() {}

    public func partialDownload(forKey key: String) -> PartialDownload? {
        partials.withLock { $0[key]?.0 }
    }

    public func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter {
        guard let kept = partials.withLock({ $0.removeValue(forKey: partial.key) }) else {
            throw FileCacheError.io(operation: "resume", errno: ENOENT)
        }
        let writer = try makeWriter(forKey: partial.key) as! Writer
        try writer.write(kept.1)
        return writer
    }

    public func discardPartialDownload(forKey key: String) {
        partials.withLock { _ = $0.removeValue(forKey: key) }
    }

    fileprivate func keepPartial(key: String, data: Data, validator: String) {
        partials.withLock { $0[key] = (PartialDownload(key: key, byteCount: data.count, validator: validator), data) }
    }

    public var statistics: FileCacheStatistics {
        entries.withLock { FileCacheStatistics(count: $0.count, totalBytes: $0.values.reduce(0) { $0 + $1.entry.byteCount }) }
    }

    fileprivate func commit(key: String, url: URL, data: Data, metadata: FileCacheMetadata) -> FileCacheEntry {
        let entry = FileCacheEntry(key: key, fileURL: url, byteCount: data.count, createdAt: Date(), metadata: metadata)
        let replaced = entries.withLock { $0.updateValue(Stored(entry: entry, checksum: CRC32.checksum(data)), forKey: key) }
        if let replaced { try? FileManager.default.removeItem(at: replaced.entry.fileURL) }
        commits.increment()
        return entry
    }

    private final class Writer: FileCacheWriter {
        private let cache: SimpleFileCache
        private let key: String
        private let url: URL
        private let buffer = Lock<Data?>(Data())

        init(cache: SimpleFileCache, key: String, url: URL) {
            self.cache = cache
            self.key = key
            self.url = url
        }

        func write(_ chunk: Data) throws {
            try buffer.withLock { buffer in
                guard buffer != nil else { throw FileCacheError.writerClosed }
                buffer!.append(chunk)
            }
        }

        func commit(metadata: FileCacheMetadata) throws -> FileCacheEntry {
            guard
                let data = buffer.withLock({ buffer -> Data? in
                    defer { buffer = nil }
                    return buffer
                })
            else { throw FileCacheError.writerClosed }
            try data.write(to: url, options: .atomic)
            return cache.commit(key: key, url: url, data: data, metadata: metadata)
        }

        func abort() { buffer.withLock { $0 = nil } }

        func suspend(validator: String) {
            let data = buffer.withLock { buffer -> Data? in
                defer { buffer = nil }
                return buffer
            }
            if let data, !data.isEmpty { cache.keepPartial(key: key, data: data, validator: validator) }
        }
    }
}
