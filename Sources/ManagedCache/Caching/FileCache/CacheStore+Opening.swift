import Foundation
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening without waiting for the index: `init` returns once the journal is
/// mapped; the replay that builds the index runs on a thread of its own; a lookup that comes
/// first is answered from the journal itself.
///
/// What a hit needs is the key's last `add` and what followed it (`remove`, `metadata`,
/// `verified`). The journal's lookup table (`JournalLookupTable`, written at compaction and when
/// the last instance closes) says where those records are in the part of the journal it covers;
/// `JournalSnapshot.lookUp` reads and checks them, then walks what was appended after the table
/// (usually nothing) by the frames' length prefixes, comparing keys in place and decoding only the
/// key's own frames. About 0.05 ms for 100,000 entries, where the replay (decoding every record
/// into the index) takes tens of milliseconds; without a table, walking the whole journal takes a
/// few milliseconds (touching every page of it is most of that). A lookup that finds nothing is
/// answered too, when that is certain (`JournalSnapshot.find`: a lookup table whose slots check
/// out lists every key of its prefix, and the scan of what follows it is short and reads
/// through) and the journal on disk is still the snapshot; otherwise it waits for the replay, so
/// a miss is never reported for an entry the replayed index would have. Everything else that
/// needs the whole index waits for the replay: every write (commit, removal, metadata), trim,
/// statistics and the preload queries. So the limits are decided on the complete index exactly
/// as before, at every commit and across instances and processes.
///
/// The snapshot is the journal as it was under the journal lock at the opening; what other
/// instances append later is applied when the replay finishes (as any instance catches up), so
/// an early hit sees what a hit on a not yet caught-up index would see. Hits served early are
/// remembered (`earlyAnswers`), so reading them finds their record, and their uses and
/// verifications are applied to the index once it is built. After a crash the install also
/// reconciles index and files (`OpeningReplay.reconcilesCrash`): until then an entry is served early
/// only if its file is there with its recorded size (one `stat`), so an entry the killed instance
/// lost, or one removed while the journal could not record it, is not served again. A missing
/// journal or one without a valid header take the ordinary way: replay and repair inside `init`.
/// A damaged frame the replay finds makes it repair the journal, as before; an entry served from
/// past the damage was still the key's own, checked entry.
extension CacheStore {
    /// Starts the replay of `job` on a thread of its own. The thread never holds the cache: it
    /// decodes, then installs the index into the cache's `state`, unless the
    /// cache's `deinit` took the result first (it finishes the opening before closing). So
    /// releasing the cache closes it at once, whatever the thread is doing. The thread is named
    /// `openingThreadName`, for debuggers, samples and the thread counts of soaks.
    ///
    /// After a crash, a second thread (`listingThreadName`) lists `ready/` meanwhile, and the
    /// install helps it with the buckets left: on two cores the opening then takes about as long
    /// as the listing alone, where one after the other took both.
    func startOpening(_ job: OpeningReplay) {
        let (layout, state, clock) = (self.layout, self.state, self.clock)
        if let listing = job.listing {
            Thread.detachNewThread {
                EngineThreads.nameCurrentThread(Self.listingThreadName)
                listing.help()
            }
        }
        Thread.detachNewThread {
            EngineThreads.nameCurrentThread(Self.openingThreadName)
            guard job.claim() else { return }
            job.publish(job.decode(layout: layout))
            // The install writes (the session, the limits' evictions, a compaction).
            BackgroundActivity.run {
                Self.install(job, waiting: false, into: state, layout: layout, clock: clock)
            }
        }
    }

    /// The name of the thread an opening replays on: 15 bytes at most, as Linux keeps no more (a
    /// longer one was refused, and the thread kept the name of the thread that opened the cache).
    /// Not `MCache.…`: the opening's thread is the cache's, for as long as it opens, not one of
    /// the engine's fixed threads.
    static let openingThreadName = "FileCache.open"
    /// The name of the thread that lists `ready/` beside the replay after a crash.
    static let listingThreadName = "FileCache.list"

    /// Runs the replay of `job` and installs the index, or waits while other threads do.
    func completeOpening(_ job: OpeningReplay) {
        if job.claim() { job.publish(job.decode(layout: layout)) }
        Self.install(job, waiting: true, into: state, layout: layout, clock: clock)
        job.waitUntilFinished()
    }

    /// Installs the decoded index of `job` into `state`, unless another thread does (or, without
    /// `waiting`, the decoding has not finished). After a crash, the listing of `ready/` for the
    /// reconciliation is finished first, before the lock (`ReadyListing.InProgress`). An excess
    /// over the limits the install found is then worked off in steps (`workOffExcess`): on the
    /// background thread that installed, or on a thread of its own when an operation did.
    private static func install(
        _ job: OpeningReplay, waiting: Bool, into state: SharedLock<StoreState>, layout: CacheLayout,
        clock: @escaping @Sendable () -> Date
    ) {
        guard var decoded = job.takeDecoded(waiting: waiting) else { return }
        let listing = job.listing?.finish()
        if !waiting { job.reached(.beforeBackgroundInstall) }
        let (files, trees, excess) = state.withLock { state -> ([String], [String], Bool) in
            state._finishOpening(job, decoded: &decoded, listing: listing, now: clock().timeIntervalSinceReferenceDate)
            defer {
                state.pendingUnlinks.removeAll()
                state.pendingTreeRemovals.removeAll()
            }
            let excess = state._isWorkingOffExcess
            state.openingDeletionsPending = excess || !state.pendingUnlinks.isEmpty || !state.pendingTreeRemovals.isEmpty
            return (state.pendingUnlinks, state.pendingTreeRemovals, excess)
        }
        job.markFinished()
        delete(files, trees)
        releaseFreedHeapPages()
        if !excess {
            if !files.isEmpty || !trees.isEmpty { state.withLock { $0.openingDeletionsPending = false } }
        } else if waiting {
            Thread.detachNewThread {
                EngineThreads.nameCurrentThread(Self.openingThreadName)
                job.reached(.beforeWorkingOffExcess)
                BackgroundActivity.run { workOffExcess(in: state, clock: clock) }
            }
        } else {
            job.reached(.beforeWorkingOffExcess)
            workOffExcess(in: state, clock: clock)
        }
    }

    /// Gives the pages of freed heap memory back to the system. The replay built the index
    /// with temporaries (decoded records, tables sized from the journal's length, then packed)
    /// that it freed; in the process's heap they stay resident until an allocation reuses them:
    /// about 5 bytes an entry at a million entries, a tenth of what the index itself keeps.
    /// One call after the install (0.2 ms at a million entries here) returns them. Only free
    /// pages are touched, whoever freed them.
    private static func releaseFreedHeapPages() {
        #if canImport(Glibc)
        // `malloc_trim` is glibc's (malloc.h, which the Glibc module does not export): looked up
        // once by name, and skipped where another C library has none.
        _ = mallocTrim?(0)
        #elseif canImport(Darwin)
        _ = malloc_zone_pressure_relief(nil, 0)
        #endif
    }

    #if canImport(Glibc)
    /// glibc's `int malloc_trim(size_t pad)`, if the C library has it (looked up in every loaded
    /// object: `RTLD_DEFAULT` is the null handle on glibc).
    private static let mallocTrim: (@convention(c) (UInt) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UInt) -> Int32).self)
    }()
    #endif

    /// Works off the excess over the configured limits an opening found, a step at a time
    /// (`StoreState._stepTowardConfiguredLimits`): each step in a hold of its own of the mutex
    /// and the journal lock, its files deleted after it, so a call waits for one step at most
    /// (about a millisecond) and the limits are reached a moment later (about 0.2 s for every
    /// 10,000 entries over them, measured by `big-file-cache-million`). Stops when the cache is
    /// within its limits or closed. When a step fails (the disk, or another process holding the
    /// journal lock for too long) or the steps stop evicting, the limits are enforced whole
    /// again, by the next commit, as before.
    private static func workOffExcess(in state: SharedLock<StoreState>, clock: @Sendable () -> Date) {
        var stalledSteps = 0
        while true {
            let (more, evicted, files, trees) = state.withLock { state -> (Bool, Bool, [String], [String]) in
                guard !state.closed, state._isWorkingOffExcess else { return (false, false, [], []) }
                let before = state.index.count
                var more = false
                do throws(FileCacheError) {
                    try state._ensureUsable()
                    try state._lockJournal()
                    defer { state._unlockJournal() }
                    try state._catchUp()
                    more = state._stepTowardConfiguredLimits(now: clock().timeIntervalSinceReferenceDate)
                } catch {
                    state.limits = state.configuredLimits
                }
                state._publishMissShortcut()
                defer {
                    state.pendingUnlinks.removeAll()
                    state.pendingTreeRemovals.removeAll()
                }
                return (more, state.index.count < before, state.pendingUnlinks, state.pendingTreeRemovals)
            }
            delete(files, trees)
            stalledSteps = evicted ? 0 : stalledSteps + 1
            guard more else { break }
            if stalledSteps > StoreState.passesPerRotation {
                state.withLock { $0.limits = $0.configuredLimits }
                break
            }
        }
        state.withLock { $0.openingDeletionsPending = false }
    }

    /// Waits until the opening's replay has finished and the files it evicted are deleted (for
    /// the tests, which compare the directory with the index), at most `timeout` seconds for the
    /// deletions: a test then fails on what it finds rather than hanging.
    func finishOpeningAndItsDeletions(timeout: Double = 60) {
        finishOpening()
        let start = MonotonicInstant.now
        while state.withLock({ $0.openingDeletionsPending }), MonotonicInstant.now.seconds(since: start) < timeout {
            usleep(1_000)
        }
    }

    /// Waits until the opening's replay has finished (runs it if nobody has started it).
    func finishOpening() {
        if let job = state.withLock({ $0.opening }) { completeOpening(job) }
    }

    /// What a lookup made while the opening's replay has not finished can tell.
    enum EarlyLookup {
        /// The key's entry: one served before, or one the journal's snapshot holds, unexpired.
        case entry(FileCacheEntry)
        /// The key has no entry: the snapshot says so for certain (`JournalSnapshot.find`), and
        /// the journal on disk is still the snapshot, byte for byte (no other instance appended
        /// to or replaced it since).
        case absent
        /// The caller must wait for the index: the snapshot is not certain, the entry expired,
        /// the journal changed since the opening, the cache is in trouble, or the replay
        /// finished meanwhile.
        case wait
    }

    /// The entry of `key` while `job` has not finished, or the certainty that it has none (see
    /// `EarlyLookup`).
    ///
    /// Why a miss may be answered before the replay: the replay of the snapshot, then the catching
    /// up with what other instances appended since (nothing, when the journal is still the
    /// snapshot), is what builds the index; the install's other steps only remove entries (the
    /// reconciliation after a crash drops records whose file is gone) or apply this instance's
    /// uses. Every write of this instance waits for the replay, so nothing it commits can be
    /// missing from the snapshot, and the answer stays right if the replay finishes meanwhile.
    /// The answer is as of the `stat` of the journal, taken after the snapshot was read; it takes
    /// no lock (a key served early was found in the same snapshot, so it is never absent from it).
    func earlyLookup(forKey key: String, job: OpeningReplay, now: Double) -> EarlyLookup {
        let found: JournalSnapshot.Answer
        switch job.snapshot.find(key) {
        case .uncertain:
            return .wait
        case .absent:
            return job.snapshot.isStill(at: layout.journal) ? .absent : .wait
        case .entry(let answer):
            found = answer
        }
        enum Known {
            case answer(EarlyAnswer)
            case new
            case wait
        }
        let known = state.withLock { state -> Known in
            guard state.opening === job, !state.degraded else { return .wait }
            guard let answer = state.earlyAnswers[IndexKey(key)] else { return .new }
            guard answer.expires > now else { return .wait }
            state.earlyTouches.append(key)
            return .answer(answer)
        }
        switch known {
        case .wait:
            return .wait
        case .answer(let answer):
            return .entry(makeEntry(answer.record, path: answer.location.path))
        case .new:
            break
        }
        let path = layout.path(for: found.record.id)
        // After a crash, or a closing whose removals the journal could not record, the journal
        // may name files that are gone: one `stat` keeps such an entry from being served before
        // the install's reconciliation drops it.
        if job.reconcilesCrash, Posix.status(path).map({ Int($0.st_size) }) != found.record.size { return .wait }
        let location = EntryLocation(path: path)
        let served = state.withLock { state -> Bool in
            guard state.opening === job, !state.degraded else { return false }
            // Judged as if unpinned: a pin changed after the lookup table was written is not in
            // the table, so the answer's pin may be out of date. An entry this calls expired waits
            // for the index, which knows (a pinned entry never expires); one it serves is served
            // rightly either way.
            let expires = state.index.expiry(created: found.record.created, metadata: found.record.metadata)
            guard expires > now else { return false }
            state._noteEarlyHit(EarlyAnswer(record: found.record, location: location, stamp: found.stamp, expires: expires))
            return true
        }
        return served ? .entry(makeEntry(found.record, path: location.path)) : .wait
    }
}
