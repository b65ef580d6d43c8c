import Foundation

/// What ``FileCache`` and ``BigFileCache`` share: one directory, an index kept as a crash-safe
/// journal, and every operation of ``FileCaching``. The two differ in how they lay their files
/// out and how they evict (see each); everything here behaves the same in both.
///
/// Not a cache of its own: open a `FileCache` or a `BigFileCache`. Take a `JournaledFileCache`
/// where code works with either:
///
/// ```swift
/// func keepForOffline(_ data: Data, key: String, in cache: JournaledFileCache) throws {
///     try cache.store(data, forKey: key, pinned: true)
///     print(cache.statistics.pinnedCount, "pinned in", cache.directory.path)
/// }
/// ```
///
/// Every method may be called from any thread.
// @unchecked: a class that is not final cannot be checked. Its stored properties are `let`s of
// Sendable types (`URL`, `Configuration`, `CacheStore`), its subclasses (`FileCache` and `BigFileCache`, the only
// ones: no initializer is visible outside the module) add only `let`s of Sendable types, and
// every operation goes through `CacheStore`, which is Sendable and guards its own state.
public class JournaledFileCache: FileCaching, @unchecked Sendable {
    /// The limits of a ``FileCache`` or a ``BigFileCache``. Each is optional; `nil` (the default)
    /// means unlimited, so set at least one unless the directory is cleaned some other way.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes of entry data to keep. Default: unlimited.
        public var byteLimit: Int?
        /// The most entries to keep. Default: unlimited.
        public var countLimit: Int?
        /// How long an entry stays valid after its commit, unless its metadata has an
        /// `expirationDate` (which then decides, earlier or later). Default: forever.
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
            pinnedByteLimit: Int? = JournaledFileCache.Configuration.defaultPinnedByteLimit,
            fileProtection: FileProtection = .completeUntilFirstUserAuthentication
        ) {
            self.byteLimit = byteLimit
            self.countLimit = countLimit
            self.maximumAge = maximumAge
            self.pinnedByteLimit = pinnedByteLimit
            self.fileProtection = fileProtection
        }
    }

    /// The cache's root directory.
    public final let directory: URL
    /// The limits it enforces.
    public final let configuration: Configuration
    /// The cache's files and index.
    final let store: CacheStore

    /// Whether the opening's replay has not finished yet (benchmarks of the opening).
    package final var isOpening: Bool { store.isOpening }

    /// The layout of the directories of the class an initializer is called on: each public
    /// subclass names its own, and inherits the initializers below.
    class var layoutKind: CacheLayout.Kind { .single }

    /// Opens the cache in `directory` in the layout of the class it is called on (see the
    /// subclasses' public initializers), with a custom clock for expiry (tests); without
    /// `replaysInBackground` the journal's replay waits for the first operation that needs the
    /// index (tests of the opening); `lockWait` bounds each wait for the cross-process journal
    /// lock (tests of a stopped process).
    package init(
        directory: URL, configuration: Configuration, clock: @escaping @Sendable () -> Date, replaysInBackground: Bool = true,
        lockWait: Double? = nil
    ) throws {
        self.directory = directory
        self.configuration = configuration
        store = try CacheStore(
            directory: directory, kind: Self.layoutKind,
            limits: CacheLimits(
                byteLimit: configuration.byteLimit, countLimit: configuration.countLimit,
                maximumAge: configuration.maximumAge, pinnedByteLimit: configuration.pinnedByteLimit,
                lockWait: lockWait ?? CacheLimits.defaultLockWait),
            clock: clock, replaysInBackground: replaysInBackground, protection: configuration.fileProtection)
    }

    /// The complete, unexpired entry for `key`, or nil; a hit makes it the most recently used
    /// (in its bucket, for a ``BigFileCache``). Also returns nil while the cache directory is
    /// unusable.
    ///
    /// - Parameter key: The data key, any string.
    /// - Returns: The entry, or `nil`.
    public final func entry(forKey key: String) -> FileCacheEntry? {
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
    public final func readData(for entry: FileCacheEntry) throws -> Data {
        try store.readData(for: entry)
    }

    /// Checks the entry's file against its checksum without keeping the bytes; call it before
    /// handing `entry.fileURL` to a decoder. Throws like `readData(for:)`.
    ///
    /// - Parameter entry: An entry ``entry(forKey:)`` returned.
    /// - Throws: ``FileCacheError/corrupted(key:)`` or ``FileCacheError/io(operation:errno:)``.
    public final func verify(_ entry: FileCacheEntry) throws {
        try store.verify(entry)
    }

    /// Starts an invisible entry for `key` that a download streams into, in a new file in
    /// `loading/`. Throws `FileCacheError.io` when the disk refuses or the key is longer than 1 MiB.
    ///
    /// - Parameter key: The data key the entry will be committed under.
    /// - Returns: A writer; see ``FileCacheWriter``.
    /// - Throws: ``FileCacheError/io(operation:errno:)``.
    public final func makeWriter(forKey key: String) throws -> any FileCacheWriter {
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
    public final func makeWriter(forKey key: String, pinned: Bool) throws -> any FileCacheWriter {
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
    public final func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata = FileCacheMetadata()) throws -> FileCacheEntry {
        try store.store(data, forKey: key, metadata: metadata)
    }

    /// Stores `data` under `key` in one step, replacing any previous entry, and pins it when
    /// `pinned` is true, atomically with the commit. A key already pinned stays pinned.
    ///
    /// ```swift
    /// // Assumes `cachesDirectory` (the app's caches directory, a URL).
    /// let cache = try FileCache(directory: cachesDirectory.appendingPathComponent("saved"))
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
    public final func store(
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
    public final func pin(forKey key: String) throws -> FileCacheEntry {
        try store.pin(forKey: key)
    }

    /// Unpins `key`'s entry, if it is pinned: it is the most recently used entry under the
    /// limits again, and expires by its age. Nothing happens when the key has no entry.
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written (the
    ///   entry stays pinned).
    public final func unpin(forKey key: String) throws {
        try store.unpin(forKey: key)
    }

    /// The pinned entries, with their sizes, most recently used first.
    ///
    /// - Returns: Every pinned entry.
    public final func pinnedEntries() -> [FileCacheEntry] {
        store.pinnedEntries()
    }

    /// Replaces the metadata of `key`'s entry (and with it its expiry); does nothing when the
    /// key has no entry.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata.
    ///   - key: The entry's data key.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written.
    public final func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws {
        try store.updateMetadata(metadata, forKey: key)
    }

    /// Removes `key`'s entry, if any, and deletes its file. On a full disk too: the file is
    /// deleted even when the index cannot record the removal, and the entry does not come back
    /// (the next opening reconciles, as after a crash). Only when the disk refuses both (a
    /// read-only volume) does the entry come back at the next opening: see
    /// ``removeEntryReportingFailure(forKey:)``.
    ///
    /// - Parameter key: The entry's data key.
    public final func removeEntry(forKey key: String) {
        try? store.removeEntry(forKey: key)
    }

    /// Removes `key`'s entry, as ``removeEntry(forKey:)`` does, and throws when the removal does
    /// not last (the disk refused both deleting the file and recording the removal).
    ///
    /// - Parameter key: The entry's data key.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the entry comes back at the next opening.
    public final func removeEntryReportingFailure(forKey key: String) throws {
        try store.removeEntry(forKey: key)
    }

    /// Removes every entry and deletes their files; the cache stays usable. Writes in progress are not
    /// affected and appear when they commit. On a full disk
    /// too: the files are deleted first, and the entries do not come back.
    public final func removeAll() {
        store.removeAllPartials()
        try? store.removeAll()
    }

    /// Removes every entry, as ``removeAll()`` does, and throws when that does not last (files
    /// that could be neither deleted nor forgotten by the index: a read-only volume).
    ///
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when entries come back at the next opening.
    public final func removeAllReportingFailure() throws {
        store.removeAllPartials()
        try store.removeAll()
    }

    /// The bytes of an interrupted download of `key`, kept to resume it (in `partial/`).
    ///
    /// - Parameter key: The data key of the download.
    /// - Returns: The kept bytes' description, or `nil`.
    public final func partialDownload(forKey key: String) -> PartialDownload? {
        store.partialDownload(forKey: key)
    }

    /// A writer continuing `partial`: its bytes are already written.
    ///
    /// - Parameter partial: What ``partialDownload(forKey:)`` returned.
    /// - Returns: A writer that appends to the kept bytes.
    /// - Throws: ``FileCacheError`` when the kept bytes are gone or cannot be reopened.
    public final func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter {
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
    public final func makeWriter(resuming partial: PartialDownload, pinned: Bool) throws -> any FileCacheWriter {
        try store.makeWriter(resuming: partial, pinned: pinned)
    }

    /// Drops the kept bytes of an interrupted download of `key`.
    ///
    /// - Parameter key: The data key of the interrupted download.
    public final func discardPartialDownload(forKey key: String) {
        store.discardPartialDownload(forKey: key)
    }

    /// Deletes expired entries, enforces the limits and writes pending recency to the index.
    /// (Commits enforce the limits already; call this after changing the clock-dependent state,
    /// e.g. periodically for expiry when nothing is being written.) A ``FileCache`` goes over
    /// every entry; a ``BigFileCache`` runs one pass on the next tenth of its buckets, then more
    /// while it is over a limit (at most one rotation).
    public final func trim() {
        store.trim()
    }

    /// The number of entries and their total size, from memory.
    public final var statistics: FileCacheStatistics {
        store.statistics
    }

    /// Up to `limit` entries, most recently used first, without counting as a use (for preloading).
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: Up to `limit` entries, most recently used first.
    public final func entriesByRecency(limit: Int) -> [FileCacheEntry] {
        store.entriesByRecency(limit: limit)
    }

    /// Up to `limit` entries whose last use was in the previous session (the most recent earlier
    /// opening of this directory that used any entry), most recently used first.
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: Up to `limit` entries, most recently used first.
    public final func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] {
        store.entriesUsedInPreviousSession(limit: limit)
    }

    /// Writes pending recency to the index now (it is also written in batches and on release).
    ///
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the index cannot be written.
    public final func flush() throws {
        try store.flush()
    }

    /// Runs `hook` inside every commit, after the rename into `ready/` and before the record is
    /// journaled, with the journal lock held (for the tests: a child process stops itself there).
    ///
    /// - Parameter hook: What to run; nil: nothing.
    package final func setHookInsideCommit(_ hook: (@Sendable () -> Void)?) {
        store.betweenRenameAndRecord.withLock { $0 = hook }
    }

    /// Closes the cache now, as releasing the last reference to it would: writes the recency
    /// kept in memory and, when the journal has grown, a compacted journal and its lookup table;
    /// deletes this instance's session file (so the next opening trusts the index without
    /// listing a directory) and flushes the journal to disk when no other instance has the
    /// directory open; closes every file and drops the index from memory. No lock is held
    /// afterwards (none is held between operations anyway).
    ///
    /// Every later call fails: the throwing methods throw ``FileCacheError/closed``, lookups
    /// return `nil`, ``statistics`` is zero, ``trim()`` and the removals do nothing (they leave
    /// the files alone). A writer still open commits nothing (its commit throws `closed` and its
    /// file is deleted). A manager using the cache reports those failures
    /// (``ManagerEvent/fileCacheFailure(key:operation:error:)``) and loads from the network. A
    /// second `close()` does nothing. Other instances on the directory are not affected.
    ///
    /// Closing does not throw: the one thing it can fail to write is recency (when the disk
    /// refuses, or another process holds the journal lock for a whole second), and that loses
    /// nothing but eviction order. Call ``flush()`` first to learn whether it is written.
    ///
    /// ```swift
    /// // Assumes `cachesDirectory` (the app's caches directory, a URL).
    /// let cache = try FileCache(directory: cachesDirectory.appendingPathComponent("account-1"))
    /// try cache.store(Data("hello".utf8), forKey: "greeting")
    /// cache.close()  // before switching accounts: the next user gets another directory
    /// ```
    public final func close() {
        store.close()
    }
}
