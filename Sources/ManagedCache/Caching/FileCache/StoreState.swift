#if canImport(Glibc)
import Glibc
import ManagedCacheLocking
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The mutable state of one open cache: the in-memory index, the journal, the lock descriptors
/// and the session numbers.
///
/// It only ever exists inside `CacheStore`'s `Mutex`, so every method runs with that mutex held;
/// the leading underscore on the methods says so. Methods that touch the journal or `ready/` also
/// take the cross-process journal lock (`_lockJournal`), which nests.
struct StoreState {
    let layout: CacheLayout
    let limits: CacheLimits
    var index: CacheIndex
    /// nil while the cache directory is unusable.
    var journal: JournalFile?
    var journalLockDescriptor: Int32 = -1
    var sessionLockDescriptor: Int32 = -1
    var journalLockDepth = 0
    /// This instance's session number, and the highest any instance has announced.
    var currentSession: UInt32 = 0
    var highestSession: UInt32 = 0
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

    init(layout: CacheLayout, limits: CacheLimits) {
        self.layout = layout
        self.limits = limits
        index = CacheIndex(bucketCount: layout.bucketCount, maximumAge: limits.maximumAge)
    }

    // MARK: Opening

    /// Opens (or, after the directory was lost, reopens) the cache on disk and rebuilds the
    /// index from the journal.
    ///
    /// 1. Creates the directories.
    /// 2. Tries to lock `session.lock` exclusively without waiting: success means no other
    ///    instance (in any process) has this cache open. Otherwise waits for a shared lock.
    /// 3. Under the journal lock: creates this instance's file in `sessions/`; alone, notes
    ///    whether other session files exist (left by instances that never closed: crashes) and
    ///    deletes them; replays the journal; alone, empties `loading/` (only at the first open:
    ///    later our own writers may be using it) and deletes leftovers of interrupted
    ///    compactions and `removeAll`s.
    /// 4. Reconciles index and files when a crash is possible (alone with a crashed session
    ///    file, a damaged or missing journal): lists the directories (names only) and stats the indexed
    ///    files, drops records whose file is missing or has the wrong size, deletes files no
    ///    record names, and rewrites the journal. A clean open skips all of that: it reads the
    ///    journal and nothing else.
    /// 5. Announces a new session, enforces the limits, and downgrades to a shared lock.
    mutating func _attach(initialOpen: Bool, now: Double?) throws(FileCacheError) {
        let directories = layout.makeDirectories()
        guard directories == 0 else {
            degraded = true
            throw .io(operation: "create cache directories", errno: directories)
        }
        _releaseLockFiles()
        journal?.close()
        journal = nil
        sessionLockDescriptor = Posix.openFile(layout.sessionLock, O_RDWR | O_CREAT)
        journalLockDescriptor = Posix.openFile(layout.journalLock, O_RDWR | O_CREAT)
        guard sessionLockDescriptor >= 0, journalLockDescriptor >= 0 else {
            let error = -min(sessionLockDescriptor, journalLockDescriptor)
            degraded = true
            throw .io(operation: "open cache lock files", errno: error)
        }
        let alone = Posix.lockFile(sessionLockDescriptor, LOCK_EX | LOCK_NB) == 0
        if !alone { _ = Posix.lockFile(sessionLockDescriptor, LOCK_SH) }
        defer { if alone { _ = Posix.lockFile(sessionLockDescriptor, LOCK_SH) } }

        _lockJournal()
        defer { _unlockJournal() }
        if let previous = sessionFile { Posix.unlinkItem(previous) }
        let mine = FileNames.uniqueSuffix()
        let marker = Posix.openFile(layout.sessions + "/" + mine, O_WRONLY | O_CREAT)
        guard marker >= 0 else {
            degraded = true
            throw .io(operation: "create session file", errno: -marker)
        }
        Posix.closeFile(marker)
        sessionFile = layout.sessions + "/" + mine
        var needsRepair = false
        if alone {
            for name in Posix.names(in: layout.sessions) ?? [] where name != mine {
                // An instance that is not open any more but never closed: it crashed.
                needsRepair = true
                Posix.unlinkItem(layout.sessions + "/" + name)
            }
        }
        let (existing, openError) = JournalFile.openExisting(layout.journal)
        if let existing {
            journal = existing
            if try _replayWholeJournal() { needsRepair = true }
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
        if needsRepair || journal == nil {
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
        if _journalNeedsCompaction { try? _compact() }
    }

    // MARK: Closing

    /// Persists pending recency, compacts an oversized journal and deletes this instance's
    /// session file: as long as no other instance crashed, the next open can then trust the index
    /// without listing any directory. The last open instance flushes the journal to disk first.
    mutating func _close() {
        // A journal gone from its path means the directory was removed: catching up would
        // recreate it (`_reattach`), and closing must never create anything.
        if let journal, !degraded, journal.pathState(layout.journal) != .missing {
            _lockJournal()
            if (try? _catchUp()) != nil {
                try? _flushTouches()
                if _journalNeedsCompaction { try? _compact() }
            }
            _unlockJournal()
        }
        if !degraded, let journal, sessionLockDescriptor >= 0,
           Posix.lockFile(sessionLockDescriptor, LOCK_EX | LOCK_NB) == 0,
           journal.pathState(layout.journal) == .same {
            // The second and last place the caches fsync: once no session file is left, the next
            // open trusts the journal to describe the files, so it must be on disk first.
            journal.synchronize()
        }
        if !degraded, let sessionFile { Posix.unlinkItem(sessionFile) }
        sessionFile = nil
        journal?.close()
        journal = nil
        _releaseLockFiles()
    }

    /// Unlocks and closes the lock descriptors. The explicit unlock matters: a child process
    /// forked by another thread holds a copy of every descriptor until it execs, and closing ours
    /// would leave the lock held through that copy, so the next open would not know it is alone.
    mutating func _releaseLockFiles() {
        for descriptor in [journalLockDescriptor, sessionLockDescriptor] where descriptor >= 0 {
            _ = Posix.lockFile(descriptor, LOCK_UN)
            Posix.closeFile(descriptor)
        }
        journalLockDescriptor = -1
        sessionLockDescriptor = -1
    }

    // MARK: The journal lock

    /// Takes the cross-process journal lock (`flock` on `root/lock`); nests.
    mutating func _lockJournal() {
        if journalLockDepth == 0 && journalLockDescriptor >= 0 {
            _ = Posix.lockFile(journalLockDescriptor, LOCK_EX)
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

    /// Whether the journal has grown well past what a compacted one would hold.
    var _journalNeedsCompaction: Bool {
        guard let journal else { return false }
        return journal.appliedOffset > max(256 << 10, 2 * index.recordBytes + (64 << 10))
    }
}
