import Foundation

/// A file cache the manager stores downloaded bytes in: the swappable component HJCache kept in
/// `HJMOFileCache` "so that you can replace it with your own caching code".
///
/// The package ships `FileCache` (one directory tree, LRU, limits by bytes, count and age) and
/// `BigFileCache` (bucketed, trims a tenth at a time, for 100,000+ files). Write your own by
/// conforming to this protocol and setting it as `ObjectManager.Configuration.fileCache`.
///
/// Contract:
/// - Keys are arbitrary strings (`ObjectRequest.dataKey`: an oid or a URL, possibly hostile). An
///   implementation must keep every file inside its root and must never return one key's bytes for another.
/// - A download streams into a `FileCacheWriter`; nothing is visible under the key until `commit`
///   succeeds, and `abort` (or a crash) leaves nothing behind in the visible cache.
/// - `entry(forKey:)` returns only complete, unexpired entries; `readData(for:)` and `verify(_:)`
///   detect corrupted or truncated files, remove them and throw `FileCacheError.corrupted`.
/// - Every method may be called from any thread at any time.
public protocol FileCaching: AnyObject, Sendable {
    /// The complete, unexpired entry for `key`, or `nil`. Counts as a use for LRU order.
    func entry(forKey key: String) -> FileCacheEntry?

    /// Reads an entry's bytes and checks them against its checksum. On a mismatch or a missing
    /// file the entry is removed and `FileCacheError.corrupted` is thrown.
    func readData(for entry: FileCacheEntry) throws -> Data

    /// Checks an entry's file against its checksum without keeping the bytes (for large objects
    /// handed to decoders by file URL). Removes the entry and throws `FileCacheError.corrupted` on a mismatch.
    func verify(_ entry: FileCacheEntry) throws

    /// Starts a new, invisible entry for `key` that a download streams into.
    func makeWriter(forKey key: String) throws -> any FileCacheWriter

    /// Stores `data` under `key` in one step (write, then commit).
    @discardableResult
    func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata) throws -> FileCacheEntry

    /// Replaces the metadata of an existing entry (a `304 Not Modified` refreshes freshness this way).
    func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws

    /// Removes the entry for `key`, if any.
    func removeEntry(forKey key: String)

    /// Removes every entry. The cache stays usable.
    func removeAll()

    /// Enforces the limits now (implementations also enforce them on every commit).
    func trim()

    /// The number of entries and their total size, available at all times.
    var statistics: FileCacheStatistics { get }

    /// The partial data of an interrupted download kept for `key`, if any (optional: the default keeps none).
    func partialDownload(forKey key: String) -> PartialDownload?
    /// A writer that continues `partial` (optional: the default throws, and the download restarts).
    func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter
    /// Drops the partial data kept for `key` (optional).
    func discardPartialDownload(forKey key: String)

    /// Up to `limit` entries, most recently used first, without counting as a use: what the
    /// manager preloads into memory. Defaults to none (a cache that does not support preloading).
    func entriesByRecency(limit: Int) -> [FileCacheEntry]

    /// Up to `limit` entries last used in the previous session (the latest earlier opening of
    /// the cache that used any), most recently used first. Defaults to none.
    func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry]
}

/// A download being written into a file cache. Not visible to readers until `commit`.
public protocol FileCacheWriter: AnyObject, Sendable {
    /// Appends bytes. Throws when the disk refuses (full, removed, read-only).
    func write(_ chunk: Data) throws
    /// Makes the entry visible under its key, atomically replacing any previous entry, and enforces
    /// the cache's limits. After a failed commit nothing is visible.
    @discardableResult
    func commit(metadata: FileCacheMetadata) throws -> FileCacheEntry
    /// Discards what was written. Safe to call more than once and after `commit`.
    func abort()
    /// Keeps what was written as a resumable partial download tagged with `validator` (optional:
    /// the default aborts).
    func suspend(validator: String)
}

/// One complete object in a file cache.
public struct FileCacheEntry: Sendable, Hashable {
    /// The key the entry was stored under.
    public let key: String
    /// The file holding exactly the entry's bytes. Read it or map it; do not modify it.
    public let fileURL: URL
    /// The size of the file.
    public let byteCount: Int
    /// When the entry was committed.
    public let createdAt: Date
    /// What was stored with the bytes.
    public var metadata: FileCacheMetadata

    /// Creates an entry description (for implementers of `FileCaching`).
    public init(key: String, fileURL: URL, byteCount: Int, createdAt: Date, metadata: FileCacheMetadata) {
        self.key = key
        self.fileURL = fileURL
        self.byteCount = byteCount
        self.createdAt = createdAt
        self.metadata = metadata
    }
}

/// What a file cache stores beside an entry's bytes.
public struct FileCacheMetadata: Sendable, Hashable, Codable {
    /// When the entry expires, overriding the cache's default maximum age. `nil`: use the default.
    public var expirationDate: Date?
    /// The response's `ETag`, for revalidation.
    public var etag: String?
    /// The response's `Last-Modified`, for revalidation.
    public var lastModified: String?
    /// The response's `Content-Type`.
    public var contentType: String?
    /// Until when the entry is fresh by the server's caching headers (`max-age`, `Expires`).
    public var freshUntil: Date?
    /// Other fields for custom layers.
    public var userInfo: [String: String]

    /// Creates metadata; every field is empty by default.
    public init(
        expirationDate: Date? = nil, etag: String? = nil, lastModified: String? = nil,
        contentType: String? = nil, freshUntil: Date? = nil, userInfo: [String: String] = [:]
    ) {
        self.expirationDate = expirationDate
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.freshUntil = freshUntil
        self.userInfo = userInfo
    }
}

/// A file cache's size at one moment.
public struct FileCacheStatistics: Sendable, Hashable {
    /// Entries in the cache.
    public var count: Int
    /// Bytes of entry data in the cache.
    public var totalBytes: Int

    /// Creates a statistics value.
    public init(count: Int, totalBytes: Int) {
        self.count = count
        self.totalBytes = totalBytes
    }
}

/// Why a file-cache operation failed.
public enum FileCacheError: Error, Sendable, Hashable {
    /// The entry's file is missing, truncated or does not match its checksum; it has been removed.
    case corrupted(key: String)
    /// The disk refused an operation: `operation` names it, `errno` says why.
    case io(operation: String, errno: Int32)
    /// The writer was already committed or aborted.
    case writerClosed
}

/// Conveniences, so a custom file cache implements only what is specific to it.
extension FileCaching {
    /// Writes `data` with a new writer and commits it.
    @discardableResult
    public func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata) throws -> FileCacheEntry {
        let writer = try makeWriter(forKey: key)
        do {
            try writer.write(data)
            return try writer.commit(metadata: metadata)
        } catch {
            writer.abort()
            throw error
        }
    }

    /// Verifies an entry by reading it (`readData(for:)` checks it).
    public func verify(_ entry: FileCacheEntry) throws {
        _ = try readData(for: entry)
    }
}
