import Foundation

/// A file cache for 100,000 entries and more: entries spread over 256 bucket directories, and
/// limits enforced a tenth of the cache at a time, so no operation's cost grows with the cache.
///
/// Choose it over `FileCache` when the cache holds so many files that one directory, a global
/// eviction order or a trim over everything would cost too much. It keeps every guarantee of
/// `FileCache` (nothing partial visible, integrity, safe names, crash safety, sharing, surviving
/// disk failures); what differs is eviction:
///
/// - **A pass works on one tenth.** Each trim pass takes the next slice of about 26 buckets (the
///   slices rotate; the rotation belongs to the instance). It deletes the slice's expired entries
///   and, when the cache is over a limit, the slice's least recently used entries in proportion,
///   so that after a full rotation the cache would be at 90 % of its limit. A pass costs
///   in-memory work on its slice plus one unlink per file it deletes, whatever the cache's size.
/// - **Still always within limits.** A commit that puts the cache over a limit runs passes on
///   successive slices until it is within them again (at most one rotation); since each pass
///   brings a little headroom, most commits run no pass at all. Expired entries are deleted at
///   every commit from an expiry queue (cost proportional to what expired), never returned.
/// - **LRU within a slice.** Eviction order is least recently used among the slice's entries,
///   not over the whole cache.
///
/// Costs: opening maps the index journal and lists only the small `sessions/` and `loading/`
/// directories: no bucket listing, no stat per entry. The journal is replayed into the index (one
/// checksum per record) on a thread of its own; a hit that comes first is found through the
/// journal's lookup table (`journal.lookup`, where each key's records are) or by scanning the
/// journal, while misses, writes and trims wait for the index. After a crash (a session file left
/// behind: on iOS, a launch after the app was killed in the background) the same thread also
/// lists the bucket directories and stats their files, then reconciles them with the index under
/// the cache's lock; hits come from the journal meanwhile. Only a missing or damaged journal
/// header makes the open replay at once. Measured on 100,000 entries: the first hit in about 0.35 ms, 1/190 of the time
/// to build the whole index, which takes about 2× listing one directory of 100,000 names with
/// `FileManager`; after a crash also about 0.35 ms, where the whole opening takes about 475 ms
/// (BENCHMARKS.md).
///
/// `removeAll` leaves a working cache (it moves `ready/` aside in one rename, recreates it and
/// deletes the old tree); bucket directories are created as they are needed.
public final class BigFileCache: FileCaching {
    /// The limits of a `BigFileCache`. Each is optional; `nil` (the default) means unlimited.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes of entry data to keep. Default: unlimited.
        public var byteLimit: Int?
        /// The most entries to keep. Default: unlimited.
        public var countLimit: Int?
        /// How long an entry stays valid after its commit, unless its metadata has an
        /// `expirationDate` (which then decides). Default: forever.
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

    /// What one trim pass did.
    public struct TrimPassReport: Sendable, Hashable {
        /// Which tenth of the buckets the pass worked on (0 to 9).
        public var slice: Int
        /// How many bucket directories the slice covers (25 or 26 of 256).
        public var bucketsVisited: Int
        /// Entries in the slice when the pass started.
        public var entriesInSlice: Int
        /// Entries the pass looked at (the slice's entries when some can expire, plus eviction candidates).
        public var entriesExamined: Int
        /// Entries the pass deleted.
        public var entriesRemoved: Int
        /// Bytes the pass deleted.
        public var bytesRemoved: Int

        /// Creates a report.
        ///
        /// - Parameters:
        ///   - slice: Which tenth of the buckets the pass worked on.
        ///   - bucketsVisited: How many bucket directories the slice covers.
        ///   - entriesInSlice: Entries in the slice when the pass started.
        ///   - entriesExamined: Entries the pass looked at.
        ///   - entriesRemoved: Entries the pass deleted.
        ///   - bytesRemoved: Bytes the pass deleted.
        public init(
            slice: Int, bucketsVisited: Int, entriesInSlice: Int, entriesExamined: Int,
            entriesRemoved: Int, bytesRemoved: Int
        ) {
            self.slice = slice
            self.bucketsVisited = bucketsVisited
            self.entriesInSlice = entriesInSlice
            self.entriesExamined = entriesExamined
            self.entriesRemoved = entriesRemoved
            self.bytesRemoved = bytesRemoved
        }
    }

    /// The number of bucket directories under `ready/`.
    public static let bucketCount = 256
    /// The number of passes in which every bucket is visited once.
    public static let passesPerRotation = 10

    /// The cache's root directory.
    public let directory: URL
    /// The limits it enforces.
    public let configuration: Configuration
    let store: CacheStore

    /// Opens the cache in `directory`, creating it (and missing parents) if needed. Throws
    /// `FileCacheError.io` when the directory cannot be created or holds a `FileCache`.
    ///
    /// - Parameters:
    ///   - directory: The cache's root, used by this cache type only. Several instances, in this
    ///     process or another, may share it.
    ///   - configuration: The limits. Default: unlimited.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the directory cannot be created,
    ///   its index cannot be opened, or it holds a ``FileCache``.
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
            directory: directory, kind: .bucketed,
            limits: CacheLimits(
                byteLimit: configuration.byteLimit, countLimit: configuration.countLimit,
                maximumAge: configuration.maximumAge),
            clock: clock, replaysInBackground: replaysInBackground)
    }

    /// The complete, unexpired entry for `key`, or nil; a hit makes it the most recently used in
    /// its bucket. Also returns nil while the cache directory is unusable.
    ///
    /// - Parameter key: The data key, any string.
    /// - Returns: The entry, or `nil`.
    public func entry(forKey key: String) -> FileCacheEntry? {
        store.entry(forKey: key)
    }

    /// The entry's bytes, checked against its size and checksum; see `FileCache.readData(for:)`.
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Returns: Exactly the committed bytes.
    /// - Throws: ``FileCacheError/corrupted(key:)`` or ``FileCacheError/io(operation:errno:)``.
    public func readData(for entry: FileCacheEntry) throws -> Data {
        try store.readData(for: entry)
    }

    /// Checks the entry's file against its checksum without keeping the bytes; see `FileCache.verify(_:)`.
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Throws: ``FileCacheError/corrupted(key:)`` or ``FileCacheError/io(operation:errno:)``.
    public func verify(_ entry: FileCacheEntry) throws {
        try store.verify(entry)
    }

    /// Starts an invisible entry for `key` that a download streams into. Throws
    /// `FileCacheError.io` when the disk refuses or the key is longer than 1 MiB.
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

    /// Replaces the metadata of `key`'s entry; does nothing when the key has no entry.
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

    /// Removes every entry; the cache stays usable.
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

    /// Runs one pass on the next slice, then more while the cache is over a limit (at most one
    /// rotation), and writes pending recency to the index.
    public func trim() {
        store.trim()
    }

    /// Runs exactly one pass on the next tenth of the buckets and reports what it did; nil when
    /// the disk is unusable.
    ///
    /// - Returns: What the pass examined and deleted, or `nil` when the disk is unusable.
    @discardableResult
    public func trimPass() -> TrimPassReport? {
        store.trimPass()
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

    /// Up to `limit` entries whose last use was in the previous session, most recently used first.
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: Up to `limit` entries, most recently used first.
    public func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] {
        store.entriesUsedInPreviousSession(limit: limit)
    }

    /// Writes pending recency to the index now.
    ///
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written.
    public func flush() throws {
        try store.flush()
    }
}
