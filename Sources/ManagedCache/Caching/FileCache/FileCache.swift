import Foundation

/// A file cache in one directory, with least-recently-used eviction and limits by bytes, count
/// and age enforced on every commit. The default file cache for up to some tens of thousands of
/// entries; for 100,000 and more, use ``BigFileCache``.
///
/// ```swift
/// let cache = try FileCache(
///     directory: cachesDirectory.appendingPathComponent("images"),
///     configuration: .init(byteLimit: 200 << 20, countLimit: 5_000, maximumAge: 7 * 86_400))
/// ```
///
/// What it guarantees:
/// - **Nothing partial is ever visible.** Downloads stream into `root/loading/`; `commit` renames
///   the finished file into `root/ready/` (one atomic `rename(2)`) and records it in the index.
///   An aborted, failed or abandoned writer, or a crash, leaves nothing in `ready/`, and the
///   `loading/` leftovers of dead processes are deleted at the next open.
/// - **Always within limits.** After every commit the cache holds at most `countLimit` entries and
///   `byteLimit` bytes, plus at most the object just written (which is kept even when it alone
///   exceeds the byte limit, so its reader can still use it), and no expired entry.
/// - **LRU.** A hit makes an entry the most recently used. Recency is kept in memory and written
///   to the index in batches (every 256 hits, with the next commit, at `trim`, `flush` and when
///   the cache is released), never one disk write per hit.
/// - **Integrity.** Each entry's size and checksum (XXH64; CRC-32 for entries written by
///   versions before it) are recorded at commit; `readData(for:)` and
///   `verify(_:)` detect a changed, truncated or missing file, remove the entry and throw
///   `FileCacheError.corrupted`.
/// - **Any key is safe.** File names are a SHA-256 of the key plus a version, never the key; the
///   full key is kept in the index and compared byte for byte, so distinct keys never share data.
/// - **Crash safe.** The index is an append-only journal with a checksum per record. After a
///   crash the next open reconciles index and files (see `BigFileCache` for the costs).
/// - **Shared safely.** Several instances, in one process or several (an app and its extension),
///   can use one directory: promotions and index writes are serialised by a `flock`, and an entry
///   another instance committed is found on the next lookup miss.
/// - **Disk failures are survivable.** When the directory is removed, replaced by a file,
///   read-only or full, operations throw `FileCacheError.io` and lookups return nil; the cache
///   recreates its directories and carries on once the disk is usable again.
///
/// Every method may be called from any thread.
public final class FileCache: FileCaching {
    /// The limits of a `FileCache`. Each is optional; `nil` (the default) means unlimited, so set
    /// at least one unless the directory is cleaned some other way.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes of entry data to keep. Default: unlimited.
        public var byteLimit: Int?
        /// The most entries to keep. Default: unlimited.
        public var countLimit: Int?
        /// How long an entry stays valid after its commit, unless its metadata has an
        /// `expirationDate` (which then decides, earlier or later). Default: forever.
        public var maximumAge: TimeInterval?

        /// Creates a configuration; every limit defaults to unlimited.
        ///
        /// - Parameters:
        ///   - byteLimit: The most bytes of entry data to keep. Default `nil`: unlimited.
        ///   - countLimit: The most entries to keep. Default `nil`: unlimited.
        ///   - maximumAge: Seconds an entry stays valid after its commit. Default `nil`: forever.
        public init(byteLimit: Int? = nil, countLimit: Int? = nil, maximumAge: TimeInterval? = nil) {
            self.byteLimit = byteLimit
            self.countLimit = countLimit
            self.maximumAge = maximumAge
        }
    }

    /// The cache's root directory.
    public let directory: URL
    /// The limits it enforces.
    public let configuration: Configuration
    let store: CacheStore

    /// Opens the cache in `directory`, creating it (and missing parents) if needed. The index is
    /// built from the journal on a thread of its own: hits are served from the start, and the
    /// limits are enforced before the first write, miss or trim (see `BigFileCache`'s costs).
    /// Throws `FileCacheError.io` when the directory cannot be created or holds a `BigFileCache`.
    ///
    /// - Parameters:
    ///   - directory: The cache's root, used by this cache type only. Several instances, in this
    ///     process or another, may share it.
    ///   - configuration: The limits. Default: unlimited.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the directory cannot be created,
    ///   its index cannot be opened, or it holds a ``BigFileCache``.
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws {
        try self.init(directory: directory, configuration: configuration, clock: { Date() })
    }

    /// Opens the cache with a custom clock for expiry (tests); without `replaysInBackground` the
    /// journal's replay waits for the first operation that needs the index (tests of the opening).
    init(
        directory: URL, configuration: Configuration, clock: @escaping @Sendable () -> Date, replaysInBackground: Bool = true
    ) throws {
        self.directory = directory
        self.configuration = configuration
        store = try CacheStore(
            directory: directory, kind: .single,
            limits: CacheLimits(
                byteLimit: configuration.byteLimit, countLimit: configuration.countLimit,
                maximumAge: configuration.maximumAge),
            clock: clock, replaysInBackground: replaysInBackground)
    }

    /// The complete, unexpired entry for `key`, or nil; a hit makes it the most recently used.
    /// Also returns nil while the cache directory is unusable.
    ///
    /// - Parameter key: The data key, any string.
    /// - Returns: The entry, or `nil`.
    public func entry(forKey key: String) -> FileCacheEntry? {
        store.entry(forKey: key)
    }

    /// The entry's bytes, checked against its size and checksum. Throws `FileCacheError.corrupted`
    /// (after removing the entry) when the file is missing, truncated or changed, and
    /// `FileCacheError.io` when the disk fails. Also throws `corrupted`, leaving the cache alone,
    /// when the entry was removed or replaced by a newer version since it was looked up: look
    /// the key up again.
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Returns: Exactly the committed bytes.
    /// - Throws: ``FileCacheError/corrupted(key:)`` or ``FileCacheError/io(operation:errno:)``.
    public func readData(for entry: FileCacheEntry) throws -> Data {
        try store.readData(for: entry)
    }

    /// Checks the entry's file against its checksum without keeping the bytes; call it before
    /// handing `entry.fileURL` to a decoder. Throws like `readData(for:)`.
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Throws: ``FileCacheError/corrupted(key:)`` or ``FileCacheError/io(operation:errno:)``.
    public func verify(_ entry: FileCacheEntry) throws {
        try store.verify(entry)
    }

    /// Starts an invisible entry for `key` that a download streams into, in a new file in
    /// `loading/`. Throws `FileCacheError.io` when the disk refuses or the key is longer than 1 MiB.
    ///
    /// - Parameter key: The data key the entry will be committed under.
    /// - Returns: A writer; see ``FileCacheWriter``.
    /// - Throws: ``FileCacheError/io(operation:errno:)``.
    public func makeWriter(forKey key: String) throws -> any FileCacheWriter {
        try store.makeWriter(forKey: key)
    }

    /// Stores `data` under `key` in one step, replacing any previous entry.
    ///
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The data key to store them under.
    ///   - metadata: What to keep beside them. Default: empty.
    /// - Returns: The committed entry.
    /// - Throws: ``FileCacheError/io(operation:errno:)``; nothing is stored then.
    @discardableResult
    public func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata = FileCacheMetadata()) throws -> FileCacheEntry {
        try store.store(data, forKey: key, metadata: metadata)
    }

    /// Replaces the metadata of `key`'s entry (and with it its expiry); does nothing when the
    /// key has no entry.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata.
    ///   - key: The entry's data key.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written.
    public func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws {
        try store.updateMetadata(metadata, forKey: key)
    }

    /// Removes `key`'s entry, if any.
    ///
    /// - Parameter key: The entry's data key.
    public func removeEntry(forKey key: String) {
        store.removeEntry(forKey: key)
    }

    /// Removes every entry; the cache stays usable. Writes in progress are not affected and
    /// appear when they commit.
    public func removeAll() {
        store.removeAllPartials()
        store.removeAll()
    }

    /// The bytes of an interrupted download of `key`, kept to resume it (in `partial/`).
    ///
    /// - Parameter key: The data key of the download.
    /// - Returns: The kept bytes' description, or `nil`.
    public func partialDownload(forKey key: String) -> PartialDownload? {
        store.partialDownload(forKey: key)
    }

    /// A writer continuing `partial`: its bytes are already written.
    ///
    /// - Parameter partial: What ``partialDownload(forKey:)`` returned.
    /// - Returns: A writer that appends to the kept bytes.
    /// - Throws: ``FileCacheError`` when the kept bytes are gone or cannot be reopened.
    public func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter {
        try store.makeWriter(resuming: partial)
    }

    /// Drops the kept bytes of an interrupted download of `key`.
    ///
    /// - Parameter key: The data key of the interrupted download.
    public func discardPartialDownload(forKey key: String) {
        store.discardPartialDownload(forKey: key)
    }

    /// Deletes expired entries, enforces the limits and writes pending recency to the index.
    /// (Commits enforce the limits already; call this after changing the clock-dependent state,
    /// e.g. periodically for expiry when nothing is being written.)
    public func trim() {
        store.trim()
    }

    /// The number of entries and their total size, from memory.
    public var statistics: FileCacheStatistics {
        store.statistics
    }

    /// Up to `limit` entries, most recently used first, without counting as a use (for preloading).
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: Up to `limit` entries, most recently used first.
    public func entriesByRecency(limit: Int) -> [FileCacheEntry] {
        store.entriesByRecency(limit: limit)
    }

    /// Up to `limit` entries whose last use was in the previous session (the most recent earlier
    /// opening of this directory that used any entry), most recently used first.
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: Up to `limit` entries, most recently used first.
    public func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] {
        store.entriesUsedInPreviousSession(limit: limit)
    }

    /// Writes pending recency to the index now (it is also written in batches and on release).
    ///
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written.
    public func flush() throws {
        try store.flush()
    }
}
