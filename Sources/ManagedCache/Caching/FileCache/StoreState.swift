import Foundation

#if canImport(Glibc)
import Glibc
import ManagedCacheLocking
#elseif canImport(Darwin)
import Darwin
#endif

/// The mutable state of one open cache: the in-memory index, the journal, the lock descriptors
/// and the session numbers.
///
/// It only ever exists inside `CacheStore`'s `Mutex`, so every method runs with that mutex held;
/// the leading underscore on the methods says so. Methods that touch the journal or `ready/` also
/// take the cross-process journal lock (`_lockJournal`), which nests.
struct StoreState {
    let layout: CacheLayout
    /// The limits the commits enforce: the configured ones, but while an opening works off an
    /// excess over them (see `_enforceLimitsAtOpening`), when they are the cache's size, lowered
    /// step by step.
    var limits: CacheLimits
    /// The limits as configured.
    let configuredLimits: CacheLimits
    var index: CacheIndex
    /// nil while the cache directory is unusable.
    var journal: JournalFile?
    /// The descriptor of `root/lock`, open for the instance's life; it is locked (`flock`) only
    /// inside an operation, never between two (see `_lockJournal`).
    var journalLockDescriptor: Int32 = -1
    var journalLockDepth = 0
    /// Set by `_closeForGood`: every later operation throws `FileCacheError.closed`.
    var closed = false
    /// An opening after a crash could not take the journal lock to reconcile index and files:
    /// the next recovery (the cache is left degraded) does.
    var reconciliationPending = false
    /// Whether the umask, when the cache was last attached, took bits of `0600` away (or the file
    /// system keeps no such mode): then each entry's file is set to `0600` after it is created
    /// (one `fchmod` per write); otherwise `open(2)` creates it `0600` already. The umask only
    /// removes bits, so a file created so under a umask changed since is never wider than `0600`:
    /// at worst, under a umask that takes the owner's own bits, narrower. Reading it then fails
    /// (`EACCES`, an I/O error that marks the cache degraded), and `_recover` sets this again.
    var entryFilesNeedModeSettled = true
    /// Files being renamed into `ready/` outside the mutex, their records not journaled yet
    /// (`_beginPromotion`): no reconciliation deletes them, and the journal lock is held for each.
    var promotions: Set<FileID> = []
    /// This instance's session number, and the highest any instance has announced.
    var currentSession: UInt32 = 0
    var highestSession: UInt32 = 0
    /// The generation in the current journal's header (a compaction draws a new one).
    var journalGeneration: UInt64 = 0
    /// The journal and prefix the lookup table on disk describes, as far as this instance knows.
    var lookupTableCoverage: (generation: UInt64, covered: Int)?
    /// Slots hit since the last journal write (their `touchPending` flag is set).
    var pendingTouches: [Int32] = []
    /// Verifications not yet written to the journal (written with the next batch of touches).
    var pendingVerifications: [(key: String, version: UInt64, stamp: FileStamp)] = []
    /// Set after an I/O failure: the next operation first tries to recover the directories.
    var degraded = false
    /// The next tenth a `BigFileCache` trim pass works on.
    var sliceCursor = 0
    /// Files to delete once the mutex is released (their removal is already in the journal).
    var pendingUnlinks: [String] = []
    /// Directory trees to delete once the mutex is released (`removeAll`'s old `ready/`).
    var pendingTreeRemovals: [String] = []
    /// This instance's file in `sessions/`, deleted when it closes cleanly.
    var sessionFile: String?
    /// `remove` records of entries whose files are deleted but which the journal refused (a full
    /// disk): appended after the next write that succeeds (see `_finishEviction`).
    var unrecordedRemovals = JournalEncoder()
    /// `removeAll` deleted the files but could not write the new, empty journal: the next commit,
    /// trim or closing compacts again (see `_removeAll`).
    var unrecordedRemoveAll = false
    /// Whether the journal still names entries this instance removed (their files are deleted).
    /// While it does, the session file stays when the instance closes: the next opening then
    /// reconciles index and files, as after a crash, and drops those records.
    var journalMissesRemovals: Bool { !unrecordedRemovals.isEmpty || unrecordedRemoveAll }
    /// Set while an opening's repair (after a crash, or of a missing or damaged journal) has not
    /// been written: an opening that fails then keeps its session file, so that the next one
    /// repairs too.
    var repairUnfinished = false
    /// Set from a clean opening until the journal has been replayed into `index` (see
    /// `CacheStore+Opening`): meanwhile `index` is empty, lookups scan the journal's snapshot for
    /// their key, and everything else waits for the replay.
    var opening: OpeningReplay?
    /// The opening's installer is deleting the files its limits evicted, after the lock (for the
    /// tests: the index is complete before the directory agrees with it).
    var openingDeletionsPending = false
    /// Entries served by scanning before the replay finished, by key: their reads find them here.
    var earlyAnswers: [IndexKey: EarlyAnswer] = [:]
    /// Keys hit before the replay finished, in order: touched once it has.
    var earlyTouches: [String] = []
    /// Verifications noted before the replay finished: remembered once it has.
    var earlyVerifications: [(key: String, version: UInt64, stamp: FileStamp)] = []

    /// Where `_publishMissShortcut` publishes: set on the live state by `CacheStore`.
    var missShortcut: MissShortcut?

    /// What lookups may answer a miss from without the mutex (`MissShortcut`): nothing while the
    /// cache is opening, in trouble or without its journal.
    func missShortcutPublication(appending pending: Int = 0) -> MissShortcut.Publication? {
        guard opening == nil, !degraded, let journal else { return nil }
        return MissShortcut.Publication(
            filter: index.presence, device: journal.device, inode: journal.inode,
            journalSizes: journal.appliedOffset...(journal.appliedOffset + pending))
    }

    /// Publishes to `missShortcut` (the live state's; a scratch state has none) what lookups may
    /// answer a miss from, with `pending` bytes of this instance's append about to be written.
    func _publishMissShortcut(appending pending: Int = 0) {
        missShortcut?.publish(missShortcutPublication(appending: pending))
    }

    init(layout: CacheLayout, limits: CacheLimits) {
        self.layout = layout
        self.limits = limits
        configuredLimits = limits
        index = CacheIndex(bucketCount: layout.bucketCount, maximumAge: limits.maximumAge)
    }

    // MARK: Opening

    /// Opens (or, after the directory was lost, reopens) the cache on disk and rebuilds the
    /// index from the journal.
    ///
    /// 1. Creates the directories (and narrows those an earlier version left wider).
    /// 2. Opens the journal lock file; no lock is held once the opening returns.
    /// 3. Under the journal lock (a bounded wait: `FileCacheError.busy` past it): creates this
    ///    instance's file in `sessions/`; deletes the session files of instances that ended
    ///    without closing (crashes: see `SessionFiles`), noting that a crash happened; replays
    ///    the journal; alone (no other instance open), empties `loading/` (only at the first
    ///    open: later our own writers may be using it) and deletes leftovers of interrupted
    ///    compactions and `removeAll`s.
    /// 4. Reconciles index and files when a crash is possible (a crashed session file, a
    ///    damaged or missing journal): lists the directories (names only) and stats the indexed
    ///    files, drops records whose file is missing or has the wrong size, deletes files no
    ///    record names, and rewrites the journal. A clean open skips all of that: it reads the
    ///    journal and nothing else.
    /// 5. Announces a new session and enforces the limits.
    ///
    /// With `deferringReplay` (the first opening of an instance), a clean opening (no crash to
    /// reconcile, a journal with a valid header) maps the journal instead of replaying it and sets
    /// `opening`: the replay and step 5 run after `init` returns (`CacheStore+Opening`).
    mutating func _attach(initialOpen: Bool, now: Double?, deferringReplay: Bool = false) throws(FileCacheError) {
        let directories = layout.makeDirectories()
        guard directories == 0 else {
            degraded = true
            throw .io(operation: "create cache directories", errno: directories)
        }
        _releaseLockFiles()
        journal?.close()
        journal = nil
        journalLockDescriptor = Posix.openFile(layout.journalLock, O_RDWR | O_CREAT)
        guard journalLockDescriptor >= 0 else {
            degraded = true
            throw .io(operation: "open cache lock files", errno: -journalLockDescriptor)
        }

        do {
            try _lockJournal()
        } catch {
            degraded = true
            throw error
        }
        defer { _unlockJournal() }
        if let previous = sessionFile {
            Posix.unlinkItem(previous)
            SessionFiles.release(previous)
            sessionFile = nil
        }
        let (mine, createdMode, error) = SessionFiles.create(in: layout.sessions)
        guard let mine else {
            degraded = true
            throw .io(operation: "create session file", errno: error)
        }
        // The file was created `0600` less the umask: when that is `0600`, so is every entry's
        // file `makeWriter` creates, without an `fchmod` each.
        entryFilesNeedModeSettled = createdMode != PrivateFiles.fileMode
        sessionFile = mine
        var needsRepair = false
        var alone = true
        for name in Posix.names(in: layout.sessions) ?? [] {
            let path = layout.sessions + "/" + name
            guard path != mine else { continue }
            if SessionFiles.isOpen(path, legacyLock: layout.sessionLock) {
                alone = false
            } else {
                // An instance that is not open any more but never closed: it crashed.
                needsRepair = true
                Posix.unlinkItem(path)
            }
        }
        let (existing, openError) = JournalFile.openExisting(layout.journal)
        if let existing {
            journal = existing
            // Deferred after a crash too (on iOS every launch after the app was killed in the
            // background): the install reconciles (`OpeningReplay.reconcilesCrash`).
            if deferringReplay, let size = existing.size {
                let tablePath = layout.root + "/" + JournalLookupTable.fileName
                switch JournalSnapshot.open(descriptor: existing.descriptor, size: size, layout: layout.kind, tablePath: tablePath) {
                case .snapshot(let snapshot):
                    index.removeAll()
                    opening = OpeningReplay(snapshot: snapshot, limits: limits, reconcilingCrashIn: needsRepair ? layout : nil)
                    lookupTableCoverage = snapshot.table.map { ($0.generation, $0.covered) }
                case .foreignLayout:
                    degraded = true
                    throw .io(operation: "open: the directory holds a cache of another layout", errno: EINVAL)
                case .unusable:
                    break
                }
            }
            if opening == nil, try _replayWholeJournal() { needsRepair = true }
        } else if openError == ENOENT {
            // No index: whatever is in ready/ cannot be trusted. An empty journal is written below.
            index.removeAll()
            needsRepair = true
        } else {
            degraded = true
            throw .io(operation: "open index journal", errno: openError)
        }
        if alone {
            if initialOpen { _emptyLoadingDirectory() }
            _removeLeftovers()
        }
        if opening != nil {
            degraded = false
            return  // the replay, the session and the limits follow (`_finishOpening`)
        }
        if needsRepair || journal == nil {
            repairUnfinished = true
            _reconcile()
            try _compact()
        }
        highestSession += 1
        currentSession = highestSession
        var encoder = JournalEncoder()
        encoder.append(.session(currentSession))
        try _append(encoder)
        degraded = false
        if let now { _enforceLimits(now: now, protecting: nil) }
        if _journalNeedsCompaction || unrecordedRemoveAll { try? _compact() }
    }

    // MARK: Closing

    /// Persists pending recency, compacts an oversized journal and deletes this instance's
    /// session file: as long as no other instance crashed, the next open can then trust the index
    /// without listing any directory. The last open instance flushes the journal to disk first.
    mutating func _close() {
        // A journal gone from its path means the directory was removed: catching up would
        // recreate it (`_reattach`), and closing must never create anything.
        // Without the lock (another instance stopped inside a write), recency since the last
        // batch is lost: nothing else is.
        if let journal, !degraded, journal.pathState(layout.journal) != .missing, (try? _lockJournal()) != nil {
            if (try? _catchUp()) != nil {
                try? _flushTouches()
                _recordUnrecordedRemovals()
                if _journalNeedsCompaction {
                    try? _compact()
                } else if _lookupTableIsStale {
                    _writeLookupTable()  // for the next opening's first lookups
                }
            }
            _unlockJournal()
        }
        if !degraded, !journalMissesRemovals, let journal, journal.pathState(layout.journal) == .same,
            _isOnlyOpenInstance
        {
            // The second and last place the caches fsync: once no session file is left, the next
            // open trusts the journal to describe the files, so it must be on disk first.
            journal.synchronize()
        }
        // Kept when the journal may not describe the files (see `journalMissesRemovals`): the
        // next opening reconciles, as after a crash.
        if !degraded, !journalMissesRemovals, let sessionFile { Posix.unlinkItem(sessionFile) }
        if let sessionFile { SessionFiles.release(sessionFile) }
        sessionFile = nil
        journal?.close()
        journal = nil
        _releaseLockFiles()
    }

    /// Closes the cache for good (`JournaledFileCache.close()`): what `_close` does, then forgets
    /// the index and refuses every later operation. Idempotent.
    mutating func _closeForGood() {
        guard !closed else { return }
        _close()
        closed = true
        opening = nil
        index = CacheIndex(bucketCount: layout.bucketCount, maximumAge: limits.maximumAge)
        pendingTouches = []
        pendingVerifications = []
        earlyAnswers = [:]
        earlyTouches = []
        earlyVerifications = []
        missShortcut?.publish(nil)
    }

    /// Whether no other instance, in this process or another, has the cache open (see
    /// `SessionFiles`): one listing of the small `sessions/`.
    var _isOnlyOpenInstance: Bool {
        for name in Posix.names(in: layout.sessions) ?? [] {
            let path = layout.sessions + "/" + name
            if path != sessionFile, SessionFiles.isOpen(path, legacyLock: layout.sessionLock) { return false }
        }
        return true
    }

    /// Unlocks and closes the journal lock's descriptor. The explicit unlock matters: a child
    /// process forked by another thread holds a copy of every descriptor until it execs, and
    /// closing ours would leave a lock held meanwhile through that copy.
    mutating func _releaseLockFiles() {
        if journalLockDescriptor >= 0 {
            _ = Posix.lockFile(journalLockDescriptor, LOCK_UN)
            Posix.closeFile(journalLockDescriptor)
        }
        journalLockDescriptor = -1
    }

    // MARK: The journal lock

    /// Takes the cross-process journal lock (`flock` on `root/lock`); nests. Held only inside an
    /// operation (an append, a compaction, a promotion), never between two, so a process suspended
    /// between operations holds no lock (iOS ends a suspended app that holds a lock on a file in
    /// a shared container). The wait is bounded (`CacheLimits.lockWait`): an instance stopped or
    /// suspended in the middle of an operation makes others' writes throw
    /// `FileCacheError.busy`, never wait for it to go on.
    ///
    /// Without `waiting` (what a lookup does), a lock held elsewhere throws at once.
    mutating func _lockJournal(waiting: Bool = true) throws(FileCacheError) {
        if journalLockDepth == 0 && journalLockDescriptor >= 0 {
            let error = Posix.lockFile(journalLockDescriptor, waitingAtMost: waiting ? limits.lockWait : 0)
            if error == EWOULDBLOCK { throw .busy(operation: "lock the index journal") }
        }
        journalLockDepth += 1
    }

    /// Releases one level of the journal lock.
    mutating func _unlockJournal() {
        journalLockDepth -= 1
        if journalLockDepth == 0 && journalLockDescriptor >= 0 {
            _ = Posix.lockFile(journalLockDescriptor, LOCK_UN)
        }
    }

    /// Whether the lookup table on disk describes much less of the journal than there is (or
    /// another journal, or none).
    var _lookupTableIsStale: Bool {
        guard let journal else { return false }
        guard let coverage = lookupTableCoverage, coverage.generation == journalGeneration else { return true }
        return journal.appliedOffset - coverage.covered > max(64 << 10, journal.appliedOffset / 16)
    }

    /// Writes the lookup table of the journal as far as it is applied, from the index (see
    /// `JournalLookupTable`). Best effort: a table that cannot be written only leaves lookups
    /// before the next opening's replay to the scan. With the journal lock held.
    mutating func _writeLookupTable() {
        guard let journal, journal.appliedOffset < Int(JournalOffsets.unknown) else { return }
        var entries: [(key: String, offsets: JournalOffsets)] = []
        entries.reserveCapacity(index.count)
        // The keys come from the entries' records, read from the journal mapped.
        _withJournalBytes { raw in
            for slot in index.liveSlots {
                guard let key = _record(slot, in: raw)?.key else { continue }
                entries.append((key, index.offsets(slot)))
            }
        }
        let covered = journal.appliedOffset
        let bytes = JournalLookupTable.encode(generation: journalGeneration, covered: covered, entries: entries)
        // A `journal.tmp-` name: an instance opening alone deletes what a crash left of it.
        let temporary = layout.root + "/journal.tmp-lookup-" + FileNames.uniqueSuffix()
        let descriptor = Posix.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL)
        guard descriptor >= 0 else { return }
        let error = bytes.withUnsafeBytes { Posix.writeAll(descriptor, $0) }
        Posix.closeFile(descriptor)
        guard error == 0, Posix.renameItem(temporary, layout.root + "/" + JournalLookupTable.fileName) == 0 else {
            Posix.unlinkItem(temporary)
            return
        }
        lookupTableCoverage = (journalGeneration, covered)
    }

    /// Whether the journal has grown well past what a compacted one would hold.
    var _journalNeedsCompaction: Bool {
        guard let journal else { return false }
        return journal.appliedOffset > max(256 << 10, 2 * index.recordBytes + (64 << 10))
    }
}
