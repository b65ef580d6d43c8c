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
/// - Pinning is optional: a cache that cannot pin keeps the defaults, which throw
///   ``FileCacheError/pinningUnsupported`` for every pinning request (never a silent no-op) and
///   list no pinned entries. A cache that pins never removes a pinned entry to meet a limit,
///   in a trim or for its age; removals and `removeAll` still do. See <doc:FileCaches>.
public protocol FileCaching: AnyObject, Sendable {
    /// Looks up the complete, unexpired entry for a key. Counts as a use for LRU order.
    ///
    /// - Parameter key: The data key (``ObjectRequest/dataKey``): any string, possibly hostile.
    /// - Returns: The entry, or `nil` when the key has none, it expired, or the cache cannot be read.
    func entry(forKey key: String) -> FileCacheEntry?

    /// Reads an entry's bytes and checks them against its checksum.
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Returns: Exactly the bytes that were committed.
    /// - Throws: ``FileCacheError/corrupted(key:)`` when the file is missing, truncated or changed
    ///   (the entry has been removed), ``FileCacheError/io(operation:errno:)`` when the disk fails.
    func readData(for entry: FileCacheEntry) throws -> Data

    /// Checks an entry's file against its checksum without keeping the bytes: for large objects
    /// handed to decoders by file URL (``ObjectDecoding/prefersFileURL``).
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Throws: ``FileCacheError/corrupted(key:)`` on a mismatch or a missing file (the entry has
    ///   been removed), ``FileCacheError/io(operation:errno:)`` when the disk fails.
    func verify(_ entry: FileCacheEntry) throws

    // MARK: What `manage` asks on the caller's thread
    // Optional: the defaults below answer from the requirements above. A cache with a lock of its
    // own, or an index in memory, implements them so a synchronous read inside `manage` never
    // waits long for it (``FileCache`` and ``BigFileCache`` do).

    /// Whether the cache's own index, as held in memory now, has no entry for `key`: answered
    /// without a system call and without waiting for a lock. `true` lets `manage` start the load
    /// at once instead of reading the cache on the caller's thread; the load still looks the key
    /// up (``entry(forKey:)``) before downloading, so an entry another process stored a moment
    /// ago is still found, in the background. Default `false`: not known.
    ///
    /// - Parameter key: The data key.
    /// - Returns: `true` only when the key surely has no entry in this instance's index.
    func indexLacksEntry(forKey key: String) -> Bool

    /// ``entry(forKey:)``, waiting at most `seconds` for the cache's own lock: `.busy` when it
    /// stayed held that long (`manage` then leaves the read to the load, in the background).
    /// Default: ``entry(forKey:)``, always answered.
    ///
    /// - Parameters:
    ///   - key: The data key.
    ///   - seconds: The longest wait for the cache's lock.
    /// - Returns: The entry or `nil`, or `.busy`.
    func entry(forKey key: String, waitingAtMost seconds: Double) -> BoundedFileCacheAnswer<FileCacheEntry?>

    /// ``readData(for:)``, waiting at most `seconds` each time the read needs the cache's own
    /// lock: `.busy` when it stayed held that long before the bytes were read. Default:
    /// ``readData(for:)``, always answered.
    ///
    /// - Parameters:
    ///   - entry: An entry ``entry(forKey:)`` returned.
    ///   - seconds: The longest wait for the cache's lock.
    /// - Returns: The bytes, or `.busy`.
    /// - Throws: What ``readData(for:)`` throws.
    func readData(for entry: FileCacheEntry, waitingAtMost seconds: Double) throws -> BoundedFileCacheAnswer<Data>

    /// Starts a new, invisible entry that a download streams into.
    ///
    /// - Parameter key: The data key the entry will be stored under when the writer commits.
    /// - Returns: A writer; nothing is visible under `key` until its ``FileCacheWriter/commit(metadata:)``.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the disk refuses (full, read-only,
    ///   out of file descriptors).
    func makeWriter(forKey key: String) throws -> any FileCacheWriter

    /// ``makeWriter(forKey:)``, whose entry is pinned when `pinned` is true: the pin is made with
    /// the commit, atomically (a crash keeps both or neither), and the commit fails with
    /// ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)``, leaving the
    /// key's previous entry, when the entry does not fit the pinned quota. With `pinned` false,
    /// what ``makeWriter(forKey:)`` does (a key already pinned stays pinned through a new commit
    /// in the ready-made caches). The default calls ``makeWriter(forKey:)``, or throws
    /// ``FileCacheError/pinningUnsupported`` when asked to pin.
    ///
    /// - Parameters:
    ///   - key: The data key the entry will be stored under when the writer commits.
    ///   - pinned: Whether the committed entry is pinned.
    /// - Returns: A writer; nothing is visible under `key` until its ``FileCacheWriter/commit(metadata:)``.
    /// - Throws: ``FileCacheError/pinningUnsupported`` from a cache that cannot pin, or what
    ///   ``makeWriter(forKey:)`` throws.
    func makeWriter(forKey key: String, pinned: Bool) throws -> any FileCacheWriter

    /// Stores bytes in one step (write, then commit), replacing any previous entry of the key.
    ///
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The data key to store them under.
    ///   - metadata: What to keep beside them (validators, expiry, content type).
    /// - Returns: The committed entry.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the disk refuses; nothing is stored then.
    @discardableResult
    func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata) throws -> FileCacheEntry

    /// ``store(_:forKey:metadata:)``, pinning the entry in the same step when `pinned` is true
    /// (see ``makeWriter(forKey:pinned:)``). The default writes through ``makeWriter(forKey:pinned:)``.
    ///
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The data key to store them under.
    ///   - metadata: What to keep beside them.
    ///   - pinned: Whether the entry is pinned.
    /// - Returns: The committed entry.
    /// - Throws: ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)`` when a
    ///   pinned entry does not fit the quota, ``FileCacheError/pinningUnsupported`` from a cache
    ///   that cannot pin, ``FileCacheError/io(operation:errno:)`` when the disk refuses; nothing
    ///   is stored then, and the key's previous entry stays.
    @discardableResult
    func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata, pinned: Bool) throws -> FileCacheEntry

    /// Pins the key's committed entry: from now on no limit, trim or expiry removes it, and its
    /// bytes count against the pinned quota instead of the byte and count limits. A new commit of
    /// the key stays pinned; ``unpin(forKey:)``, a removal or `removeAll` ends the pin. Pinning a
    /// pinned entry changes nothing. The default throws ``FileCacheError/pinningUnsupported``.
    ///
    /// - Parameter key: The entry's data key.
    /// - Returns: The pinned entry.
    /// - Throws: ``FileCacheError/noEntry(key:)`` when the key has no (unexpired) entry,
    ///   ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)`` when it does
    ///   not fit the quota (nothing changes), ``FileCacheError/pinningUnsupported``, or
    ///   ``FileCacheError/io(operation:errno:)`` when the index cannot be written.
    @discardableResult
    func pin(forKey key: String) throws -> FileCacheEntry

    /// Unpins the key's entry: it counts against the byte and count limits again, as the most
    /// recently used entry, and expires by its age as any other. Nothing happens when the key
    /// has no entry or it is not pinned. The default throws ``FileCacheError/pinningUnsupported``.
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: ``FileCacheError/pinningUnsupported``, or ``FileCacheError/io(operation:errno:)``
    ///   when the index cannot be written (the entry stays pinned).
    func unpin(forKey key: String) throws

    /// The pinned entries, with their sizes (``FileCacheEntry/byteCount``), most recently used
    /// (or pinned) first. The default returns none: a cache that cannot pin holds no pinned entry.
    ///
    /// - Returns: Every pinned entry.
    func pinnedEntries() -> [FileCacheEntry]

    /// Replaces the metadata of an existing entry: a `304 Not Modified` refreshes freshness this way.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata, replacing the old as a whole.
    ///   - key: The entry's data key. Nothing happens when it has no entry.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written.
    func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws

    /// Removes a key's entry, if any.
    ///
    /// - Parameter key: The entry's data key.
    func removeEntry(forKey key: String)

    /// Removes every entry. The cache stays usable.
    func removeAll()

    /// ``removeEntry(forKey:)``, throwing when the removal does not last: the entry is gone from
    /// this instance but would come back at the next opening (the disk refused both deleting its
    /// file and recording the removal, as a read-only volume does). Use it where a removal must
    /// hold (a user asked to forget something). The default calls ``removeEntry(forKey:)`` and
    /// never throws, so custom caches need not implement it.
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the removal does not last.
    func removeEntryReportingFailure(forKey key: String) throws

    /// ``removeAll()``, throwing when it does not last: some entries' files could be neither
    /// deleted nor forgotten by the index, so they come back at the next opening. The default
    /// calls ``removeAll()`` and never throws.
    ///
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the removal does not last.
    func removeAllReportingFailure() throws

    /// Enforces the limits now (implementations also enforce them on every commit).
    func trim()

    /// The number of entries and their total size, available at all times.
    var statistics: FileCacheStatistics { get }

    /// The partial data of an interrupted download, if the cache kept any. Optional: the default
    /// keeps none, and interrupted downloads restart.
    ///
    /// - Parameter key: The data key of the download.
    /// - Returns: What is kept, with the validator the server must still match, or `nil`.
    func partialDownload(forKey key: String) -> PartialDownload?
    /// A writer that continues a partial download. Optional: the default throws, and the download
    /// restarts.
    ///
    /// - Parameter partial: What ``partialDownload(forKey:)`` returned.
    /// - Returns: A writer whose file already holds `partial`'s bytes; writes append the rest.
    /// - Throws: ``FileCacheError`` when the kept bytes are gone or cannot be reopened.
    func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter
    /// ``makeWriter(resuming:)``, whose entry is pinned at its commit when `pinned` is true (see
    /// ``makeWriter(forKey:pinned:)``). The default calls ``makeWriter(resuming:)``, or throws
    /// ``FileCacheError/pinningUnsupported`` when asked to pin.
    ///
    /// - Parameters:
    ///   - partial: What ``partialDownload(forKey:)`` returned.
    ///   - pinned: Whether the committed entry is pinned.
    /// - Returns: A writer whose file already holds `partial`'s bytes; writes append the rest.
    /// - Throws: What ``makeWriter(resuming:)`` throws, or ``FileCacheError/pinningUnsupported``.
    func makeWriter(resuming partial: PartialDownload, pinned: Bool) throws -> any FileCacheWriter
    /// Drops the partial data kept for a key (optional: the default does nothing).
    ///
    /// - Parameter key: The data key of the interrupted download.
    func discardPartialDownload(forKey key: String)

    /// The most recently used entries, without counting as a use: what
    /// ``ObjectManager/preloadFromFileCache(_:decoder:limit:)`` decodes with ``PreloadPolicy/all``.
    /// Optional: the default returns none (a cache that does not support preloading).
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: Up to `limit` entries, most recently used first.
    func entriesByRecency(limit: Int) -> [FileCacheEntry]

    /// The entries last used in the previous session (the latest earlier opening of the cache that
    /// used any): what ``PreloadPolicy/lastSession`` preloads. Optional: the default returns none.
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: Up to `limit` entries, most recently used first.
    func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry]

    /// Closes the cache: writes what it keeps in memory for later (recency, say), releases its
    /// files, and makes every later call fail: throwing methods throw ``FileCacheError/closed``,
    /// lookups return `nil`. A manager that still holds a closed cache reports each failure and
    /// goes on without it. Optional: the default does nothing (a cache with nothing to write or
    /// release).
    func close()
}

/// A download being written into a file cache. Not visible to readers until `commit`.
public protocol FileCacheWriter: AnyObject, Sendable {
    /// Appends bytes to the entry being written.
    ///
    /// - Parameter chunk: The next bytes of the download.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the disk refuses (full, removed,
    ///   read-only), ``FileCacheError/writerClosed`` after `commit` or `abort`.
    func write(_ chunk: Data) throws
    /// Makes the entry visible under its key, atomically replacing any previous entry, and enforces
    /// the cache's limits.
    ///
    /// - Parameter metadata: What to keep beside the bytes.
    /// - Returns: The committed entry.
    /// - Throws: ``FileCacheError`` when the file cannot be promoted or the index written; nothing
    ///   is visible after a failed commit.
    @discardableResult
    func commit(metadata: FileCacheMetadata) throws -> FileCacheEntry
    /// Discards what was written. Safe to call more than once and after `commit`.
    func abort()
    /// Keeps what was written as a resumable partial download instead of discarding it.
    /// Optional: the default aborts.
    ///
    /// - Parameter validator: The response's `ETag` or `Last-Modified`, which the server must still
    ///   match for the download to resume (`If-Range`).
    func suspend(validator: String)
}

/// One complete object in a file cache.
public struct FileCacheEntry: Sendable, Hashable {
    /// The key the entry was stored under.
    public let key: String
    /// The file holding exactly the entry's bytes. Read it or map it; do not modify it.
    public var fileURL: URL { providedURL ?? URL(fileURLWithPath: filePath, isDirectory: false) }
    /// The file's path. `FileCache` and `BigFileCache` give only this: most entries are read by
    /// path and their URL never asked for, and making a `URL` was a tenth of a synchronous
    /// file-cache hit inside `manage` on Linux.
    let filePath: String
    /// The URL an implementer of ``FileCaching`` gave.
    private let providedURL: URL?
    /// The size of the file.
    public let byteCount: Int
    /// When the entry was committed.
    public let createdAt: Date
    /// What was stored with the bytes.
    public var metadata: FileCacheMetadata

    /// Creates an entry description (for implementers of ``FileCaching``).
    ///
    /// - Parameters:
    ///   - key: The key the entry was stored under.
    ///   - fileURL: The file holding exactly the entry's bytes.
    ///   - byteCount: The file's size.
    ///   - createdAt: When the entry was committed.
    ///   - metadata: What was stored with the bytes.
    public init(key: String, fileURL: URL, byteCount: Int, createdAt: Date, metadata: FileCacheMetadata) {
        self.init(key: key, filePath: fileURL.path, providedURL: fileURL, byteCount: byteCount, createdAt: createdAt, metadata: metadata)
    }

    /// An entry whose file is known by its path (`FileCache`, `BigFileCache`).
    init(key: String, filePath: String, providedURL: URL? = nil, byteCount: Int, createdAt: Date, metadata: FileCacheMetadata) {
        self.key = key
        self.filePath = filePath
        self.providedURL = providedURL
        self.byteCount = byteCount
        self.createdAt = createdAt
        self.metadata = metadata
    }

    /// Equal when they describe the same file with the same key, size, date and metadata,
    /// whether it was given as a URL or a path.
    ///
    /// - Parameters:
    ///   - lhs: An entry.
    ///   - rhs: Another entry.
    /// - Returns: Whether both describe the same entry.
    public static func == (lhs: FileCacheEntry, rhs: FileCacheEntry) -> Bool {
        lhs.key == rhs.key && lhs.filePath == rhs.filePath && lhs.byteCount == rhs.byteCount
            && lhs.createdAt == rhs.createdAt && lhs.metadata == rhs.metadata
    }

    /// Hashes what `==` compares.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(filePath)
        hasher.combine(byteCount)
        hasher.combine(createdAt)
        hasher.combine(metadata)
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
    ///
    /// - Parameters:
    ///   - expirationDate: When the entry expires, overriding the cache's maximum age. Default `nil`.
    ///   - etag: The response's `ETag`. Default `nil`.
    ///   - lastModified: The response's `Last-Modified`. Default `nil`.
    ///   - contentType: The response's `Content-Type`. Default `nil`.
    ///   - freshUntil: Until when the server's caching headers say the entry is fresh. Default `nil`.
    ///   - userInfo: Other fields for custom layers. Default empty.
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
    /// Entries in the cache, pinned ones included.
    public var count: Int
    /// Bytes of entry data in the cache, pinned ones included.
    public var totalBytes: Int
    /// Pinned entries among ``count``: outside the byte and count limits, within the pinned quota.
    public var pinnedCount: Int
    /// Bytes of the pinned entries among ``totalBytes``.
    public var pinnedBytes: Int

    /// Creates a statistics value.
    ///
    /// - Parameters:
    ///   - count: Entries in the cache, pinned ones included.
    ///   - totalBytes: Bytes of entry data in the cache, pinned ones included.
    ///   - pinnedCount: Pinned entries among `count`. Default 0.
    ///   - pinnedBytes: Bytes of the pinned entries among `totalBytes`. Default 0.
    public init(count: Int, totalBytes: Int, pinnedCount: Int = 0, pinnedBytes: Int = 0) {
        self.count = count
        self.totalBytes = totalBytes
        self.pinnedCount = pinnedCount
        self.pinnedBytes = pinnedBytes
    }
}

/// Why a file-cache operation failed.
///
/// The ready-made caches throw only these cases. The manager reports every file-cache failure
/// with one of them in ``ManagerEvent/fileCacheFailure(key:operation:error:)``: an error of
/// another type, thrown by a custom ``FileCaching`` implementation, arrives as
/// ``other(description:)``.
public enum FileCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The entry's file is missing, truncated or does not match its checksum; it has been removed.
    case corrupted(key: String)
    /// The disk refused an operation: `operation` names it, `errno` says why.
    case io(operation: String, errno: Int32)
    /// The writer was already committed or aborted.
    case writerClosed
    /// Pinning `byteCount` bytes under `key` would put the pinned entries over the cache's pinned
    /// quota (`quota` bytes, of which other pinned entries hold `pinnedBytes`). Nothing changed: a
    /// store left the key's previous entry, a pin left the entry unpinned. Unpin or remove
    /// entries, or raise the quota (`pinnedByteLimit`).
    case pinnedQuotaExceeded(key: String, byteCount: Int, pinnedBytes: Int, quota: Int)
    /// The file cache cannot pin entries (a custom ``FileCaching`` that keeps the protocol's
    /// defaults), or there is no file cache to pin in.
    case pinningUnsupported
    /// The key has no entry to pin (never stored, removed, evicted or expired).
    case noEntry(key: String)
    /// An error that is not a `FileCacheError`, thrown by a custom file cache; `description`
    /// is its `String(describing:)`.
    case other(description: String)
    /// The cache was closed (``FileCaching/close()``): it serves and takes nothing any more.
    /// Open a new instance on its directory to use it again.
    case closed
    /// Another instance of the cache, in this process or another, held the cache's index lock for
    /// the whole bounded wait (most likely a process suspended or stopped in the middle of a
    /// write): `operation` did nothing. Try again later.
    case busy(operation: String)

    /// Wraps any error a file cache threw: a `FileCacheError` as it is, anything else as
    /// ``other(description:)``.
    ///
    /// - Parameter error: The error a ``FileCaching`` method or a ``FileCacheWriter`` threw.
    public init(_ error: any Error) {
        if let error = error as? FileCacheError {
            self = error
        } else {
            self = .other(description: String(describing: error))
        }
    }

    /// The `errno` of an ``io(operation:errno:)`` failure, `nil` for every other case.
    public var errno: Int32? {
        if case .io(_, let errno) = self { return errno }
        return nil
    }

    /// True when the process (`EMFILE`) or the system (`ENFILE`) has no file descriptor left:
    /// the cache could not open a file, and loads go on from memory without it.
    public var isOutOfDescriptors: Bool {
        errno == EMFILE || errno == ENFILE
    }

    /// A one-line description, such as `io(create a file in loading/, errno 24: Too many open files)`.
    public var description: String {
        switch self {
        case .corrupted(let key): return "corrupted(\(key))"
        case .io(let operation, let errno): return "io(\(operation), errno \(errno): \(String(cString: strerror(errno))))"
        case .writerClosed: return "writerClosed"
        case .pinnedQuotaExceeded(let key, let byteCount, let pinnedBytes, let quota):
            return "pinnedQuotaExceeded(\(key): \(byteCount) bytes, \(pinnedBytes) of \(quota) pinned)"
        case .pinningUnsupported: return "pinningUnsupported"
        case .noEntry(let key): return "noEntry(\(key))"
        case .other(let description): return "other(\(description))"
        case .closed: return "closed"
        case .busy(let operation): return "busy(\(operation))"
        }
    }
}

/// The file-cache operation a ``ManagerEvent/fileCacheFailure(key:operation:error:)`` names.
public enum FileCacheOperation: String, Sendable, Hashable, CaseIterable {
    /// Looking an entry up and reading or verifying its bytes.
    case read
    /// Opening a writer for a download (a file in `loading/`).
    case create
    /// Writing a downloaded chunk to the writer.
    case write
    /// Committing a finished download into the cache.
    case commit
    /// Updating an entry's metadata after a `304 Not Modified`.
    case updateMetadata = "update metadata"
    /// Storing a decoder's variant (a resized image, say) beside the original.
    case storeVariant = "store variant"
    /// Writing an object the app stored itself (`ObjectManager.store`).
    case storeObject = "store object"
}

/// What a file cache answered when asked to wait a bounded time for its own lock.
public enum BoundedFileCacheAnswer<Value: Sendable>: Sendable {
    /// The answer, found within the wait.
    case answered(Value)
    /// The cache's lock stayed held for the whole wait: nothing was looked up or read.
    case busy
}

/// The answers of a cache that cannot tell, or never waits long: what `manage` asks on the
/// caller's thread, answered from the cache's required methods.
extension FileCaching {
    /// `false`: a custom cache's index is not known to lack anything, so it is read.
    ///
    /// - Parameter key: The data key.
    /// - Returns: `false`.
    public func indexLacksEntry(forKey key: String) -> Bool {
        false
    }

    /// Calls ``entry(forKey:)``, however long it takes.
    ///
    /// - Parameters:
    ///   - key: The data key.
    ///   - seconds: Not used.
    /// - Returns: What ``entry(forKey:)`` returns, answered.
    public func entry(forKey key: String, waitingAtMost seconds: Double) -> BoundedFileCacheAnswer<FileCacheEntry?> {
        .answered(entry(forKey: key))
    }

    /// Calls ``readData(for:)``, however long it takes.
    ///
    /// - Parameters:
    ///   - entry: An entry ``entry(forKey:)`` returned.
    ///   - seconds: Not used.
    /// - Returns: What ``readData(for:)`` returns, answered.
    /// - Throws: What ``readData(for:)`` throws.
    public func readData(for entry: FileCacheEntry, waitingAtMost seconds: Double) throws -> BoundedFileCacheAnswer<Data> {
        .answered(try readData(for: entry))
    }
}

/// Conveniences, so a custom file cache implements only what is specific to it.
extension FileCaching {
    /// Writes `data` with a new writer and commits it; aborts the writer when either step fails.
    ///
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The data key to store them under.
    ///   - metadata: What to keep beside them.
    /// - Returns: The committed entry.
    /// - Throws: What ``makeWriter(forKey:)``, ``FileCacheWriter/write(_:)`` or
    ///   ``FileCacheWriter/commit(metadata:)`` threw.
    @discardableResult
    public func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata) throws -> FileCacheEntry {
        try Self.commit(data, through: makeWriter(forKey: key), metadata: metadata)
    }

    /// Calls ``removeEntry(forKey:)``: a custom cache that cannot tell whether a removal lasts
    /// reports nothing.
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: Nothing; conforming types that can tell throw ``FileCacheError/io(operation:errno:)``.
    public func removeEntryReportingFailure(forKey key: String) throws {
        removeEntry(forKey: key)
    }

    /// Calls ``removeAll()``: a custom cache that cannot tell whether it lasts reports nothing.
    ///
    /// - Throws: Nothing; conforming types that can tell throw ``FileCacheError/io(operation:errno:)``.
    public func removeAllReportingFailure() throws {
        removeAll()
    }

    /// Calls ``makeWriter(forKey:)``; throws ``FileCacheError/pinningUnsupported`` when asked to
    /// pin: a custom cache that cannot pin says so.
    ///
    /// - Parameters:
    ///   - key: The data key the entry will be stored under.
    ///   - pinned: Whether the entry is to be pinned.
    /// - Returns: What ``makeWriter(forKey:)`` returns.
    /// - Throws: ``FileCacheError/pinningUnsupported`` when `pinned`, else what ``makeWriter(forKey:)`` throws.
    public func makeWriter(forKey key: String, pinned: Bool) throws -> any FileCacheWriter {
        if pinned { throw FileCacheError.pinningUnsupported }
        return try makeWriter(forKey: key)
    }

    /// Calls ``makeWriter(resuming:)``; throws ``FileCacheError/pinningUnsupported`` when asked to pin.
    ///
    /// - Parameters:
    ///   - partial: What ``partialDownload(forKey:)`` returned.
    ///   - pinned: Whether the entry is to be pinned.
    /// - Returns: What ``makeWriter(resuming:)`` returns.
    /// - Throws: ``FileCacheError/pinningUnsupported`` when `pinned`, else what ``makeWriter(resuming:)`` throws.
    public func makeWriter(resuming partial: PartialDownload, pinned: Bool) throws -> any FileCacheWriter {
        if pinned { throw FileCacheError.pinningUnsupported }
        return try makeWriter(resuming: partial)
    }

    /// Writes `data` with ``makeWriter(forKey:pinned:)`` and commits it; aborts the writer when
    /// either step fails.
    ///
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The data key to store them under.
    ///   - metadata: What to keep beside them.
    ///   - pinned: Whether the entry is pinned.
    /// - Returns: The committed entry.
    /// - Throws: What ``makeWriter(forKey:pinned:)``, ``FileCacheWriter/write(_:)`` or
    ///   ``FileCacheWriter/commit(metadata:)`` threw.
    @discardableResult
    public func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata, pinned: Bool) throws -> FileCacheEntry {
        try Self.commit(data, through: makeWriter(forKey: key, pinned: pinned), metadata: metadata)
    }

    /// Writes `data` through `writer` and commits it; aborts the writer when either step fails.
    private static func commit(_ data: Data, through writer: any FileCacheWriter, metadata: FileCacheMetadata) throws -> FileCacheEntry {
        do {
            try writer.write(data)
            return try writer.commit(metadata: metadata)
        } catch {
            writer.abort()
            throw error
        }
    }

    /// Throws ``FileCacheError/pinningUnsupported``: a custom cache that cannot pin says so.
    ///
    /// - Parameter key: The entry's data key.
    /// - Returns: Never.
    /// - Throws: ``FileCacheError/pinningUnsupported``.
    @discardableResult
    public func pin(forKey key: String) throws -> FileCacheEntry {
        throw FileCacheError.pinningUnsupported
    }

    /// Throws ``FileCacheError/pinningUnsupported``: a custom cache that cannot pin says so.
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: ``FileCacheError/pinningUnsupported``.
    public func unpin(forKey key: String) throws {
        throw FileCacheError.pinningUnsupported
    }

    /// None: a cache that cannot pin holds no pinned entry.
    ///
    /// - Returns: An empty array.
    public func pinnedEntries() -> [FileCacheEntry] {
        []
    }

    /// Does nothing: a custom cache that keeps nothing for later and holds no file open has
    /// nothing to close.
    public func close() {}

    /// Verifies an entry by reading it: ``readData(for:)`` checks it.
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Throws: What ``readData(for:)`` throws.
    public func verify(_ entry: FileCacheEntry) throws {
        _ = try readData(for: entry)
    }
}
