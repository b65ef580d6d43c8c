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
/// - **Pinned entries stay.** Pinned entries (``pin(forKey:)``, `store(_:forKey:metadata:pinned:)`)
///   are in no slice's eviction order and never expire: passes skip them at no cost. They count
///   against the pinned quota (`pinnedByteLimit`), not the limits.
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
        /// The most bytes of pinned entries to keep, on top of `byteLimit`: pinned entries are
        /// outside the byte and count limits, and a store or pin that would go past this fails
        /// with ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)``.
        /// Default ``defaultPinnedByteLimit`` (512 MiB); `nil`: unlimited.
        public var pinnedByteLimit: Int?

        /// The default pinned quota: 512 MiB. Pins are what a user asked to keep, so the quota
        /// must hold an offline reading list's images or a user's own uploads without tuning;
        /// a bound, rather than none, keeps a loop that pins every load from filling the device.
        public static let defaultPinnedByteLimit = 512 << 20

        /// The Data Protection class of the files the cache creates, on Apple platforms (no effect
        /// elsewhere). Default ``FileProtection/completeUntilFirstUserAuthentication``: readable once
        /// the user has unlocked the device after a restart, so background work keeps working; see
        /// ``FileProtection`` for the trade-off.
        public var fileProtection: FileProtection

        /// Creates a configuration; every limit defaults to unlimited.
        ///
        /// - Parameters:
        ///   - byteLimit: The most bytes of entry data to keep. Default `nil`: unlimited.
        ///   - countLimit: The most entries to keep. Default `nil`: unlimited.
        ///   - maximumAge: Seconds an entry stays valid after its commit. Default `nil`: forever.
        ///   - pinnedByteLimit: The most bytes of pinned entries, on top of `byteLimit`. Default
        ///     ``defaultPinnedByteLimit`` (512 MiB); `nil`: unlimited.
        ///   - fileProtection: The Data Protection class of the cache's files on Apple platforms.
        ///     Default ``FileProtection/completeUntilFirstUserAuthentication``.
        public init(
            byteLimit: Int? = nil, countLimit: Int? = nil, maximumAge: TimeInterval? = nil,
            pinnedByteLimit: Int? = BigFileCache.Configuration.defaultPinnedByteLimit,
            fileProtection: FileProtection = .completeUntilFirstUserAuthentication
        ) {
            self.byteLimit = byteLimit
            self.countLimit = countLimit
            self.maximumAge = maximumAge
            self.pinnedByteLimit = pinnedByteLimit
            self.fileProtection = fileProtection
        }
    }

    /// What one trim pass did (for the tests and benchmarks).
    package struct TrimPassReport: Sendable, Hashable {
        /// Which tenth of the buckets the pass worked on (0 to 9).
        package var slice: Int
        /// How many bucket directories the slice covers (25 or 26 of 256).
        package var bucketsVisited: Int
        /// Entries in the slice when the pass started.
        package var entriesInSlice: Int
        /// Entries the pass looked at (the slice's entries when some can expire, plus eviction candidates).
        package var entriesExamined: Int
        /// Entries the pass deleted.
        package var entriesRemoved: Int
        /// Bytes the pass deleted.
        package var bytesRemoved: Int

        /// Creates a report.
        ///
        /// - Parameters:
        ///   - slice: Which tenth of the buckets the pass worked on.
        ///   - bucketsVisited: How many bucket directories the slice covers.
        ///   - entriesInSlice: Entries in the slice when the pass started.
        ///   - entriesExamined: Entries the pass looked at.
        ///   - entriesRemoved: Entries the pass deleted.
        ///   - bytesRemoved: Bytes the pass deleted.
        package init(
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
    package static let bucketCount = 256
    /// The number of passes in which every bucket is visited once.
    package static let passesPerRotation = 10

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
                maximumAge: configuration.maximumAge, pinnedByteLimit: configuration.pinnedByteLimit),
            clock: clock, replaysInBackground: replaysInBackground, protection: configuration.fileProtection)
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

    /// Starts an invisible entry for `key`, as ``makeWriter(forKey:)`` does, that is pinned when
    /// it commits if `pinned` is true. The pin is part of the commit's one journal record, so a
    /// crash keeps both or neither. A key already pinned stays pinned whatever `pinned` says.
    ///
    /// - Parameters:
    ///   - key: The data key the entry will be committed under.
    ///   - pinned: Whether the committed entry is pinned.
    /// - Returns: A writer whose commit throws
    ///   ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)``, leaving the
    ///   key's previous entry, when a pinned entry does not fit the pinned quota.
    /// - Throws: ``FileCacheError/io(operation:errno:)``.
    public func makeWriter(forKey key: String, pinned: Bool) throws -> any FileCacheWriter {
        try store.makeWriter(forKey: key, pinned: pinned)
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

    /// Stores `data` under `key` in one step, replacing any previous entry, and pins it when
    /// `pinned` is true, atomically with the commit. A key already pinned stays pinned.
    ///
    /// ```swift
    /// let cache = try BigFileCache(directory: cachesDirectory.appendingPathComponent("saved"))
    /// try cache.store(Data("my avatar".utf8), forKey: "me/avatar", pinned: true)  // kept until unpinned or removed
    /// ```
    ///
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The data key to store them under.
    ///   - metadata: What to keep beside them. Default: empty.
    ///   - pinned: Whether the entry is pinned.
    /// - Returns: The committed entry.
    /// - Throws: ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)`` when a
    ///   pinned entry does not fit the pinned quota, ``FileCacheError/io(operation:errno:)`` when
    ///   the disk refuses; nothing is stored then and the key's previous entry stays.
    @discardableResult
    public func store(
        _ data: Data, forKey key: String, metadata: FileCacheMetadata = FileCacheMetadata(), pinned: Bool
    ) throws -> FileCacheEntry {
        try store.store(data, forKey: key, metadata: metadata, pinned: pinned)
    }

    /// Pins `key`'s entry: no limit, trim or expiry removes it from now on; removals and
    /// `removeAll` still do. Its bytes move from the byte limit to the pinned quota. Journaled at
    /// once, so the pin survives a crash and a relaunch.
    ///
    /// - Parameter key: The entry's data key.
    /// - Returns: The pinned entry.
    /// - Throws: ``FileCacheError/noEntry(key:)`` when the key has no unexpired entry,
    ///   ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)`` when it does not
    ///   fit the pinned quota (it stays unpinned), ``FileCacheError/io(operation:errno:)``.
    @discardableResult
    public func pin(forKey key: String) throws -> FileCacheEntry {
        try store.pin(forKey: key)
    }

    /// Unpins `key`'s entry, if it is pinned: it is the most recently used entry under the
    /// limits again, and expires by its age. Nothing happens when the key has no entry.
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written (the
    ///   entry stays pinned).
    public func unpin(forKey key: String) throws {
        try store.unpin(forKey: key)
    }

    /// The pinned entries, with their sizes, most recently used first.
    ///
    /// - Returns: Every pinned entry.
    public func pinnedEntries() -> [FileCacheEntry] {
        store.pinnedEntries()
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

    /// Removes `key`'s entry, if any, and deletes its file. On a full disk too: the file is
    /// deleted even when the index cannot record the removal, and the entry does not come back
    /// (the next opening reconciles, as after a crash). Only when the disk refuses both (a
    /// read-only volume) does the entry come back at the next opening: see
    /// ``removeEntryReportingFailure(forKey:)``.
    ///
    /// - Parameter key: The entry's data key.
    public func removeEntry(forKey key: String) {
        try? store.removeEntry(forKey: key)
    }

    /// Removes `key`'s entry, as ``removeEntry(forKey:)`` does, and throws when the removal does
    /// not last (the disk refused both deleting the file and recording the removal).
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the entry comes back at the next opening.
    public func removeEntryReportingFailure(forKey key: String) throws {
        try store.removeEntry(forKey: key)
    }

    /// Removes every entry and deletes their files; the cache stays usable. On a full disk
    /// too: the files are deleted first, and the entries do not come back.
    public func removeAll() {
        store.removeAllPartials()
        try? store.removeAll()
    }

    /// Removes every entry, as ``removeAll()`` does, and throws when that does not last (files
    /// that could be neither deleted nor forgotten by the index: a read-only volume).
    ///
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when entries come back at the next opening.
    public func removeAllReportingFailure() throws {
        store.removeAllPartials()
        try store.removeAll()
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

    /// A writer continuing `partial`, pinned at its commit when `pinned` is true (see
    /// ``makeWriter(forKey:pinned:)``).
    ///
    /// - Parameters:
    ///   - partial: What ``partialDownload(forKey:)`` returned.
    ///   - pinned: Whether the committed entry is pinned.
    /// - Returns: A writer that appends to the kept bytes.
    /// - Throws: ``FileCacheError`` when the kept bytes are gone or cannot be reopened.
    public func makeWriter(resuming partial: PartialDownload, pinned: Bool) throws -> any FileCacheWriter {
        try store.makeWriter(resuming: partial, pinned: pinned)
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
    /// the disk is unusable (for the tests and benchmarks).
    ///
    /// - Returns: What the pass examined and deleted, or `nil` when the disk is unusable.
    @discardableResult
    package func trimPass() -> TrimPassReport? {
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
