import Foundation
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machinery `FileCache` and `BigFileCache` share: one directory, its journal, the
/// in-memory index and the operations of `FileCaching`. The two public classes differ only in
/// layout (one directory or 256 buckets) and in how they enforce limits (strict LRU or a tenth
/// of the buckets per pass), both of which are decided by `CacheLayout.Kind`.
///
/// Concurrency: all state is behind one lock (`state`). File data never moves under
/// it: a writer streams into its own temporary file, a reader opens and reads the entry's file
/// after copying the record out. The mutex covers index changes and journal appends; a commit's
/// rename into `ready/` happens between two locked steps, with the journal lock held throughout
/// (see `commit`); file deletions are queued and done after it is released.
///
/// Opening: a clean opening returns before the journal is replayed into the index; the replay
/// runs on a thread of its own, and lookups that come before it has finished are answered from
/// the journal: the key's entry, or no entry when the journal says so for certain (see
/// `CacheStore+Opening`). Every other operation first waits for the replay, so limits and
/// everything written are decided on the complete index, as before.
final class CacheStore: Sendable {
    let layout: CacheLayout
    let clock: @Sendable () -> Date
    /// The state behind its lock, in an object of its own: the opening's background thread
    /// (`CacheStore+Opening`) installs the replayed index into it and never holds the store
    /// itself. A thread that upgraded a weak reference to the store for the install would, if the
    /// app released the cache meanwhile, run the store's `deinit` (which closes the cache and
    /// deletes its session file) only when the install returned; an instance opened in between
    /// would find the directory still in use and skip the reconciliation a crashed instance calls
    /// for. Holding this object instead keeps "releasing the cache closes it at once" true.
    let state: SharedLock<StoreState>
    /// For the tests: runs inside `commit`, after the rename into `ready/` and before the record
    /// is journaled (what a reconciliation or `removeAll` must not get wrong).
    let betweenRenameAndRecord = Lock<(@Sendable () -> Void)?>(nil)
    /// Misses answered without `state`'s mutex (see `MissShortcut`), published by `attempt`.
    let missShortcut = MissShortcut()

    /// Opens (creating if needed) the cache in `directory`.
    init(
        directory: URL, kind: CacheLayout.Kind, limits: CacheLimits, clock: @escaping @Sendable () -> Date,
        replaysInBackground: Bool = true, protection: FileProtection = .completeUntilFirstUserAuthentication
    ) throws(FileCacheError) {
        let layout = CacheLayout(root: directory.standardizedFileURL.path, kind: kind, protection: protection)
        var initial = StoreState(layout: layout, limits: limits)
        let prior = StoreState.PriorDirectory(layout)
        do {
            try initial._attach(initialOpen: true, now: clock().timeIntervalSinceReferenceDate, deferringReplay: true)
        } catch {
            initial._abandonOpening(prior)
            throw error
        }
        let opening = initial.opening
        let (files, trees) = (initial.pendingUnlinks, initial.pendingTreeRemovals)
        initial.pendingUnlinks.removeAll()
        initial.pendingTreeRemovals.removeAll()
        self.layout = layout
        self.clock = clock
        initial.missShortcut = missShortcut
        state = SharedLock(initial)
        Self.delete(files, trees)  // what the opening queued
        if let opening, replaysInBackground { startOpening(opening) }
    }

    /// Whether the opening's replay has not finished yet (for the tests).
    var isOpening: Bool { state.withLock { $0.opening != nil } }

    /// Whether lookups before the replay use the journal's lookup table (for the tests).
    var openingUsesLookupTable: Bool { state.withLock { $0.opening?.snapshot.table != nil } }

    deinit {
        close()
    }

    /// Closes the cache for good (see `JournaledFileCache.close()`): finishes an opening still
    /// replaying, writes what `_close` writes, and refuses every later operation.
    func close() {
        if let opening = state.withLock({ $0.closed ? nil : $0.opening }) { completeOpening(opening) }
        BackgroundActivity.run { state.withLock { $0._closeForGood() } }
    }

    /// Whether `close()` was called.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// What `attempt` did: ran the body, found the opening unfinished, or (given a time budget)
    /// found the mutex held for all of it.
    enum Attempt<T> {
        case done(Result<T, FileCacheError>)
        case opening(OpeningReplay)
        case busy
    }

    /// Runs `body` on the locked state and deletes the files it queued, outside the lock; or, while
    /// the opening's replay has not finished, returns it without running `body`. With
    /// `waitingAtMost`, waits that long at most for the mutex (`.busy` then).
    func attempt<T: Sendable>(
        waitingAtMost budget: Double? = nil, _ body: @Sendable (inout StoreState) throws(FileCacheError) -> T
    ) -> Attempt<T> {
        func section(_ state: inout StoreState) -> (Attempt<T>, [String], [String]) {
            if state.closed { return (.done(.failure(.closed)), [], []) }
            if let opening = state.opening { return (.opening(opening), [], []) }
            let result = Result<T, FileCacheError> { () throws(FileCacheError) -> T in try body(&state) }
            state._publishMissShortcut()
            let files = state.pendingUnlinks
            let trees = state.pendingTreeRemovals
            state.pendingUnlinks.removeAll()
            state.pendingTreeRemovals.removeAll()
            return (.done(result), files, trees)
        }
        guard let (attempt, files, trees) = withState(waitingAtMost: budget, section) else { return .busy }
        Self.delete(files, trees)
        return attempt
    }

    /// Runs `section` on the locked state, waiting at most `budget` seconds for the mutex when
    /// given (nil when it stayed held that long), as long as it takes otherwise. Nothing else:
    /// the opening and the queued deletions are the caller's (see `attempt`).
    private func withState<R>(waitingAtMost budget: Double?, _ section: (inout StoreState) -> R) -> R? {
        if let budget {
            return state.withLock(waitingAtMost: budget) { state in section(&state) }
        }
        return state.withLock { state in section(&state) }
    }

    /// Runs `body` on the locked state (once the opening's replay has finished), then deletes the
    /// files it queued, outside the lock; inside a background activity where the platform has
    /// one (`BackgroundActivity`): these are the operations that write.
    func withState<T: Sendable>(_ body: @Sendable (inout StoreState) throws(FileCacheError) -> T) throws(FileCacheError) -> T {
        try BackgroundActivity.run { () throws(FileCacheError) -> T in
            while true {
                switch attempt(body) {
                case .done(let result): return try result.get()
                case .opening(let job): completeOpening(job)
                case .busy: continue  // not given a budget: never happens
                }
            }
        }
    }

    /// Deletes files and trees whose removal is journaled.
    static func delete(_ files: [String], _ trees: [String]) {
        for path in files { Posix.unlinkItem(path) }
        for tree in trees { Posix.removeTree(tree) }
    }

    /// The current time for expiry, as the configuration's clock tells it.
    var now: Double { clock().timeIntervalSinceReferenceDate }

    /// The public description of a record.
    func makeEntry(_ record: EntryRecord, path: String? = nil) -> FileCacheEntry {
        FileCacheEntry(
            key: record.key, filePath: path ?? layout.path(for: record.id), byteCount: record.size,
            createdAt: Date(timeIntervalSinceReferenceDate: record.created), metadata: record.metadata)
    }

    /// Marks the cache as needing recovery before its next operation.
    func noteDiskTrouble() {
        state.withLock { state in
            state.degraded = true
            missShortcut.publish(nil)
        }
    }

    // MARK: Operations

    func entry(forKey key: String) -> FileCacheEntry? {
        switch entry(forKey: key, waitingAtMost: nil) {
        case .answered(let found): found?.entry
        case .busy: nil  // not given a budget: never happens
        }
    }

    /// An entry's current record, its file's path and the stamp of its last verification, as the
    /// index holds them.
    typealias CurrentRecord = (record: EntryRecord, path: String, stamp: FileStamp?)

    /// An entry as a lookup found it: with its record, path and last verification when it came
    /// from the index (not during an opening), so that a read right after it need not take the
    /// mutex again to find them (see `readData(_:waitingAtMost:)`).
    struct LookedUp {
        let entry: FileCacheEntry
        let current: CurrentRecord?
    }

    /// What a lookup with a time budget found.
    enum BoundedLookup {
        /// The entry, or nil: none.
        case answered(LookedUp?)
        /// The mutex stayed held for the whole budget: nothing was looked up.
        case busy
    }

    /// `entry(forKey:)`, waiting at most `budget` seconds for the mutex when given (`.busy` then).
    /// During an opening the budget does not apply: the early lookup waits as before.
    func entry(forKey key: String, waitingAtMost budget: Double?) -> BoundedLookup {
        // Most lookups inside `ObjectManager.manage` are of new URLs: answer those misses without
        // waiting for the mutex, which writers hold across journal appends.
        if missShortcut.isSurelyAbsent(key, journalPath: layout.journal) { return .answered(nil) }
        let now = self.now
        while true {
            switch attempt(waitingAtMost: budget, { state throws(FileCacheError) in state._lookup(key, now: now) }) {
            case .done(let result):
                guard let (record, location, verified) = try? result.get() else { return .answered(nil) }
                return .answered(
                    LookedUp(entry: makeEntry(record, path: location.path), current: (record, location.path, verified)))
            case .opening(let job):
                switch earlyLookup(forKey: key, job: job, now: now) {
                case .entry(let early): return .answered(LookedUp(entry: early, current: nil))
                case .absent: return .answered(nil)
                case .wait: completeOpening(job)
                }
            case .busy:
                return .busy
            }
        }
    }

    func makeWriter(forKey key: String, pinned: Bool = false) throws(FileCacheError) -> StoreWriter {
        guard key.utf8.count <= StoreState.maximumKeyLength else {
            throw .io(operation: "make writer: key longer than 1 MiB", errno: ENAMETOOLONG)
        }
        var settling = try withState { state throws(FileCacheError) in
            try state._ensureUsable()
            return state.entryFilesNeedModeSettled
        }
        var path = layout.newTemporaryPath()
        var descriptor = Posix.openFile(path, O_WRONLY | O_CREAT | O_EXCL, settlingMode: settling)
        if descriptor == -ENOENT || descriptor == -ENOTDIR {
            // The directory went away since the last operation: recover, then try once more.
            settling = try withState { state throws(FileCacheError) in
                state.degraded = true
                try state._recover()
                return state.entryFilesNeedModeSettled
            }
            path = layout.newTemporaryPath()
            descriptor = Posix.openFile(path, O_WRONLY | O_CREAT | O_EXCL, settlingMode: settling)
        }
        guard descriptor >= 0 else {
            noteDiskTrouble()
            throw .io(operation: "create a file in loading/", errno: -descriptor)
        }
        return StoreWriter(
            store: self, key: key, id: FileID.makeNew(forKey: key), temporaryPath: path, descriptor: descriptor, pinned: pinned)
    }

    /// Called by a writer: promotes its temporary file and journals the entry, in three steps.
    ///
    /// Why not one: the rename into `ready/` took 1–1.5 ms on the ext4 disk of a busy test machine
    /// (measured), and every lookup, a synchronous one inside `manage` included, waits
    /// for this mutex. So the mutex covers registering the promotion (the journal lock is taken
    /// and held throughout) and journaling the record, not the rename between them.
    func commit(temporaryPath: String, record: EntryRecord) throws(FileCacheError) -> FileCacheEntry {
        // One activity from the journal lock's taking to its release (see `BackgroundActivity`).
        try BackgroundActivity.run { () throws(FileCacheError) -> FileCacheEntry in
            try promote(temporaryPath: temporaryPath, record: record)
        }
    }

    /// The three steps of `commit`.
    private func promote(temporaryPath: String, record: EntryRecord) throws(FileCacheError) -> FileCacheEntry {
        let now = self.now
        var dated = record
        dated.created = now
        let committing = dated
        // Built once: the rename, the record's step and the returned entry all name this file.
        let destination = layout.path(for: committing.id)
        try withState { state throws(FileCacheError) in try state._beginPromotion(committing.id) }
        let renameError = layout.promote(temporaryPath, to: destination, id: committing.id)
        betweenRenameAndRecord.withLock { $0 }?()
        let committed = try withState { state throws(FileCacheError) in
            try state._finishPromotion(committing, at: destination, renameError: renameError, now: now)
        }
        return makeEntry(committed, path: destination)
    }

    func store(_ data: Data, forKey key: String, metadata: FileCacheMetadata, pinned: Bool = false) throws(FileCacheError)
        -> FileCacheEntry
    {
        let writer = try makeWriter(forKey: key, pinned: pinned)
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

    /// Removes `key`'s entry; throws when the removal does not last (see `_finishEviction`).
    func removeEntry(forKey key: String) throws(FileCacheError) {
        let error = try withState { state throws(FileCacheError) in try state._remove(key: key, version: nil) }
        if error != 0 { throw .io(operation: "remove entry", errno: error) }
    }

    /// Removes every entry; throws when the removal does not last (see `_removeAll`).
    func removeAll() throws(FileCacheError) {
        try withState { state throws(FileCacheError) in try state._removeAll() }
    }

    /// Enforces the limits now and persists recency. Returns the passes run (bucketed layout).
    @discardableResult
    func trim() -> [BigFileCache.TrimPassReport] {
        let now = self.now
        return
            (try? withState { state throws(FileCacheError) in
                try state._ensureUsable()
                try state._lockJournal()
                defer { state._unlockJournal() }
                try state._catchUp()
                try? state._flushTouches()
                var reports: [BigFileCache.TrimPassReport] = []
                switch state.layout.kind {
                case .single: state._enforceByRecency(now: now, protecting: nil)
                case .bucketed: reports = state._trimBySlices(now: now)
                }
                if state._journalNeedsCompaction || state.unrecordedRemoveAll { try? state._compact() }
                return reports
            }) ?? []
    }

    /// One pass over the next tenth of the buckets (bucketed layout).
    func trimPass() -> BigFileCache.TrimPassReport? {
        let now = self.now
        return try? withState { state throws(FileCacheError) in
            try state._ensureUsable()
            try state._lockJournal()
            defer { state._unlockJournal() }
            try state._catchUp()
            return state._trimPass(now: now, ratio: state._overLimitRatio(), protecting: nil)
        }
    }

    var statistics: FileCacheStatistics {
        finishOpening()
        return state.withLock {
            FileCacheStatistics(
                count: $0.index.count, totalBytes: $0.index.totalBytes, pinnedCount: $0.index.pinnedCount,
                pinnedBytes: $0.index.pinnedBytes)
        }
    }

    /// Pins the current entry of `key` (see `StoreState._setPinned`) and returns it.
    func pin(forKey key: String) throws(FileCacheError) -> FileCacheEntry {
        let now = self.now
        let record = try withState { state throws(FileCacheError) in try state._setPinned(true, forKey: key, now: now) }
        guard let record else { throw .noEntry(key: key) }  // `_setPinned` throws first
        return makeEntry(record)
    }

    /// Unpins the current entry of `key`, if it has one.
    func unpin(forKey key: String) throws(FileCacheError) {
        let now = self.now
        _ = try withState { state throws(FileCacheError) in try state._setPinned(false, forKey: key, now: now) }
    }

    /// The pinned entries, most recently used first.
    func pinnedEntries() -> [FileCacheEntry] {
        finishOpening()
        return state.withLock { $0._pinnedRecords() }.map { makeEntry($0) }
    }

    func flush() throws(FileCacheError) {
        try withState { state throws(FileCacheError) in
            try state._ensureUsable()
            try state._flushTouches()
        }
    }

    func entriesByRecency(limit: Int) -> [FileCacheEntry] {
        finishOpening()
        return state.withLock { $0._recordsByRecency(limit: limit) }.map { makeEntry($0) }
    }

    func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] {
        finishOpening()
        return state.withLock { $0._recordsUsedInPreviousSession(limit: limit) }.map { makeEntry($0) }
    }

    /// The current record of `key` (no use recorded), its file's path and the stamp of its last
    /// verification: before the opening's replay has finished, an entry served meanwhile.
    func peek(_ key: String) -> CurrentRecord? {
        peek(key, waitingAtMost: nil).found
    }

    /// `peek(_:)`, waiting at most `budget` seconds for the mutex when given (`busy` then).
    func peek(
        _ key: String, waitingAtMost budget: Double?
    ) -> (found: CurrentRecord?, busy: Bool) {
        func section(_ state: inout StoreState) -> (CurrentRecord?, OpeningReplay?) {
            guard let job = state.opening else { return (state._peek(key), nil) }
            guard let early = state.earlyAnswers[IndexKey(key)] else { return (nil, job) }
            return ((early.record, early.location.path, early.stamp), nil)
        }
        while true {
            guard let (found, job) = withState(waitingAtMost: budget, section) else { return (nil, true) }
            guard let job else { return (found, false) }
            completeOpening(job)
        }
    }

    /// Remembers a successful verification (see `readData`); with `budget`, only if the mutex is
    /// free within it (a memo skipped costs one more checksum, at the next read).
    func noteVerified(_ record: EntryRecord, stamp: FileStamp, waitingAtMost budget: Double? = nil) {
        func section(_ state: inout StoreState) {
            if state.opening != nil {
                state._noteEarlyVerification(key: record.key, version: record.id.version, stamp: stamp)
            } else {
                state._noteVerified(key: record.key, version: record.id.version, stamp: stamp)
            }
        }
        _ = withState(waitingAtMost: budget, section)
    }
}
