#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ManagedCacheLocking

/// The machinery `FileCache` and `BigFileCache` share: one directory, its journal, the
/// in-memory index and the operations of `FileCaching`. The two public classes differ only in
/// layout (one directory or 256 buckets) and in how they enforce limits (strict LRU or a tenth
/// of the buckets per pass), both of which are decided by `CacheLayout.Kind`.
///
/// Concurrency: all state is in one `Mutex`. File data never moves under it: a writer streams
/// into its own temporary file, a reader opens and reads the entry's file after copying the
/// record out. The mutex covers index changes, journal appends and renames into `ready/`; file
/// deletions are queued and done after it is released.
final class CacheStore: Sendable {
    let layout: CacheLayout
    private let clock: @Sendable () -> Date
    private let state: Lock<StoreState>

    /// Opens (creating if needed) the cache in `directory`.
    init(directory: URL, kind: CacheLayout.Kind, limits: CacheLimits, clock: @escaping @Sendable () -> Date) throws(FileCacheError) {
        let layout = CacheLayout(root: directory.standardizedFileURL.path, kind: kind)
        var initial = StoreState(layout: layout, limits: limits)
        do {
            try initial._attach(initialOpen: true, now: clock().timeIntervalSinceReferenceDate)
        } catch {
            initial._close()
            throw error
        }
        self.layout = layout
        self.clock = clock
        state = Lock(initial)
        _ = try? withState { _ in }  // performs the deletions the open queued
    }

    deinit {
        state.withLock { $0._close() }
    }

    /// Runs `body` on the locked state, then deletes the files it queued, outside the lock.
    func withState<T: Sendable>(_ body: @Sendable (inout StoreState) throws(FileCacheError) -> T) throws(FileCacheError) -> T {
        let (result, files, trees) = state.withLock { state in
            let result = Result<T, FileCacheError> { () throws(FileCacheError) -> T in try body(&state) }
            let files = state.pendingUnlinks
            let trees = state.pendingTreeRemovals
            state.pendingUnlinks.removeAll()
            state.pendingTreeRemovals.removeAll()
            return (result, files, trees)
        }
        for path in files { Posix.unlinkItem(path) }
        for tree in trees { Posix.removeTree(tree) }
        return try result.get()
    }

    /// The current time for expiry, as the configuration's clock tells it.
    var now: Double { clock().timeIntervalSinceReferenceDate }

    /// The public description of a record.
    func makeEntry(_ record: EntryRecord, url: URL? = nil) -> FileCacheEntry {
        FileCacheEntry(key: record.key, fileURL: url ?? URL(fileURLWithPath: layout.path(for: record.id), isDirectory: false),
                       byteCount: record.size, createdAt: Date(timeIntervalSinceReferenceDate: record.created),
                       metadata: record.metadata)
    }

    /// Marks the cache as needing recovery before its next operation.
    func noteDiskTrouble() {
        state.withLock { $0.degraded = true }
    }

    // MARK: Operations

    func entry(forKey key: String) -> FileCacheEntry? {
        let now = self.now
        guard let (record, location) = try? withState({ state throws(FileCacheError) in state._lookup(key, now: now) }) else {
            return nil
        }
        return makeEntry(record, url: location.url)
    }

    func makeWriter(forKey key: String) throws(FileCacheError) -> StoreWriter {
        guard key.utf8.count <= StoreState.maximumKeyLength else {
            throw .io(operation: "make writer: key longer than 1 MiB", errno: ENAMETOOLONG)
        }
        try withState { state throws(FileCacheError) in try state._ensureUsable() }
        var path = layout.newTemporaryPath()
        var descriptor = Posix.openFile(path, O_WRONLY | O_CREAT | O_EXCL)
        if descriptor == -ENOENT || descriptor == -ENOTDIR {
            // The directory went away since the last operation: recover, then try once more.
            try withState { state throws(FileCacheError) in
                state.degraded = true
                try state._recover()
            }
            path = layout.newTemporaryPath()
            descriptor = Posix.openFile(path, O_WRONLY | O_CREAT | O_EXCL)
        }
        guard descriptor >= 0 else {
            noteDiskTrouble()
            throw .io(operation: "create a file in loading/", errno: -descriptor)
        }
        return StoreWriter(store: self, key: key, id: FileID.makeNew(forKey: key), temporaryPath: path, descriptor: descriptor)
    }

    /// Called by a writer: promotes its temporary file and journals the entry.
    func commit(temporaryPath: String, record: EntryRecord) throws(FileCacheError) -> FileCacheEntry {
        let now = self.now
        var dated = record
        dated.created = now
        let committing = dated
        let committed = try withState { state throws(FileCacheError) in
            try state._commit(temporaryPath: temporaryPath, record: committing, now: now)
        }
        return makeEntry(committed)
    }

    func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata) throws(FileCacheError) -> FileCacheEntry {
        let writer = try makeWriter(forKey: key)
        do {
            try writer.writeChunk(data)
            return try writer.commitWriting(metadata: metadata)
        } catch {
            writer.abort()
            throw error
        }
    }

    func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws(FileCacheError) {
        try withState { state throws(FileCacheError) in try state._updateMetadata(metadata, forKey: key) }
    }

    func removeEntry(forKey key: String) {
        _ = try? withState { state throws(FileCacheError) in state._remove(key: key, version: nil) }
    }

    func removeAll() {
        _ = try? withState { state throws(FileCacheError) in try state._removeAll() }
    }

    /// Enforces the limits now and persists recency. Returns the passes run (bucketed layout).
    @discardableResult
    func trim() -> [BigFileCache.TrimPassReport] {
        let now = self.now
        return (try? withState { state throws(FileCacheError) in
            try state._ensureUsable()
            state._lockJournal()
            defer { state._unlockJournal() }
            try state._catchUp()
            try? state._flushTouches()
            var reports: [BigFileCache.TrimPassReport] = []
            switch state.layout.kind {
            case .single: state._enforceByRecency(now: now, protecting: nil)
            case .bucketed: reports = state._trimBySlices(now: now)
            }
            if state._journalNeedsCompaction { try? state._compact() }
            return reports
        }) ?? []
    }

    /// One pass over the next tenth of the buckets (bucketed layout).
    func trimPass() -> BigFileCache.TrimPassReport? {
        let now = self.now
        return try? withState { state throws(FileCacheError) in
            try state._ensureUsable()
            state._lockJournal()
            defer { state._unlockJournal() }
            try state._catchUp()
            return state._trimPass(now: now, ratio: state._overLimitRatio(), protecting: nil)
        }
    }

    var statistics: FileCacheStatistics {
        state.withLock { FileCacheStatistics(count: $0.index.count, totalBytes: $0.index.totalBytes) }
    }

    func flush() throws(FileCacheError) {
        try withState { state throws(FileCacheError) in
            try state._ensureUsable()
            try state._flushTouches()
        }
    }

    func entriesByRecency(limit: Int) -> [FileCacheEntry] {
        state.withLock { $0._recordsByRecency(limit: limit) }.map { makeEntry($0) }
    }

    func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] {
        state.withLock { $0._recordsUsedInPreviousSession(limit: limit) }.map { makeEntry($0) }
    }

    /// The current record of `key` (no use recorded), its file's path and the stamp of its last verification.
    func peek(_ key: String) -> (record: EntryRecord, path: String, stamp: FileStamp?)? {
        state.withLock { $0._peek(key) }
    }

    /// Remembers a successful verification (see `readData`).
    func noteVerified(_ record: EntryRecord, stamp: FileStamp) {
        state.withLock { $0._noteVerified(key: record.key, version: record.id.version, stamp: stamp) }
    }
}
