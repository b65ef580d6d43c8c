import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An entry served before the replay finished (see `CacheStore+Opening`).
struct EarlyAnswer {
    var record: EntryRecord
    var location: EntryLocation
    var stamp: FileStamp?
    /// When it expires, as the index would compute it.
    var expires: Double
}

/// The end of a deferred opening, and the bookkeeping of what was served before it.
extension StoreState {
    /// Records a hit served by scanning the snapshot: later reads of the key find it, and its use
    /// is applied to the index once the replay has finished.
    mutating func _noteEarlyHit(_ answer: EarlyAnswer) {
        earlyAnswers[IndexKey(answer.record.key)] = answer
        earlyTouches.append(answer.record.key)
    }

    /// Remembers a verification made before the replay finished.
    mutating func _noteEarlyVerification(key: String, version: UInt64, stamp: FileStamp) {
        if var answer = earlyAnswers[IndexKey(key)], answer.record.id.version == version {
            answer.stamp = stamp
            earlyAnswers[IndexKey(key)] = answer
        }
        earlyVerifications.append((key, version, stamp))
    }

    /// Installs the index the replay of `job`'s snapshot built, and does what a synchronous
    /// opening does after its replay: catches up with what other instances appended since the
    /// snapshot (or repairs a damaged journal), reconciles index and files after a crash (with
    /// `listing`, taken before the lock exactly when the opening follows a crash), announces this
    /// instance's session, applies the hits and verifications served meanwhile, enforces the
    /// limits and compacts an oversized journal. A failure leaves the cache `degraded`: the next
    /// operation recovers, as after any failed operation.
    mutating func _finishOpening(
        _ job: OpeningReplay, decoded: inout OpeningReplay.Decoded, listing: ReadyListing?, now: Double
    ) {
        guard opening === job else { return }
        opening = nil
        // Swapped in, not copied: the index is about to change, and a second reference to its
        // storage would make that change copy 100,000 slots and keys.
        swap(&index, &decoded.index)
        highestSession = max(highestSession, decoded.highestSession)
        journalGeneration = decoded.generation
        let outcome = decoded.outcome
        journal?.markApplied(outcome.consumed, fromStart: true)
        let touched = earlyTouches
        let verified = earlyVerifications
        earlyAnswers.removeAll()
        earlyTouches.removeAll()
        earlyVerifications.removeAll()
        var locked = false
        defer { if locked { _unlockJournal() } }
        do throws(FileCacheError) {
            try _lockJournal()
            locked = true
            if outcome.damaged {
                try _repair()
            } else {
                try _catchUp()
                // After what other instances appended since the snapshot: their files are theirs.
                if let listing { _reconcileAfterCrash(listing: listing) }
            }
            highestSession += 1
            currentSession = highestSession
            var encoder = JournalEncoder()
            encoder.append(.session(currentSession))
            try _append(encoder)
        } catch {
            degraded = true
            if !locked, listing != nil || outcome.damaged { reconciliationPending = true }
            if currentSession == 0 {
                highestSession += 1
                currentSession = highestSession
            }
        }
        for key in touched {
            guard let slot = index.find(key) else { continue }
            index.touch(slot, session: currentSession)
            if !index[slot].touchPending {
                index.setTouchPending(slot, true)
                pendingTouches.append(slot)
            }
        }
        for (key, version, stamp) in verified {
            _noteVerified(key: key, version: version, stamp: stamp)
        }
        guard !degraded else { return }
        _enforceLimitsAtOpening(now: now)
        if _journalNeedsCompaction || unrecordedRemoveAll { try? _compact() }
    }

    /// What of a cache directory existed before an opening: what a failed opening must not
    /// remove, and what it must (`_abandonOpening`).
    struct PriorDirectory {
        /// The root and its missing ancestors, deepest first: the opening creates them.
        var missingDirectories: [String] = []
        /// The names in the root that the opening creates and that were not there.
        var missingNames: [String] = []

        /// Looks at `layout`'s directory before it is opened.
        init(_ layout: CacheLayout) {
            var path = layout.root
            while !path.isEmpty, path != "/", Posix.status(path) == nil {
                missingDirectories.append(path)
                path = (path as NSString).deletingLastPathComponent
            }
            let made = ["lock", "sessions", "loading", "ready", "journal", JournalLookupTable.fileName]
            missingNames = made.filter { Posix.status(layout.root + "/" + $0) == nil }
        }
    }

    /// After the first opening failed (a full disk, a read-only or foreign directory): leaves the
    /// directory as it found it. Deletes this instance's session file, unless the opening found
    /// a crash it could not repair (then the file marks it for the next opening), and, when no
    /// other instance has the directory open, what the opening created: the lock files,
    /// `sessions/`, `loading/`, `ready/`, and the directories themselves when they were new.
    mutating func _abandonOpening(_ prior: PriorDirectory) {
        journal?.close()
        journal = nil
        if let sessionFile, !repairUnfinished || !prior.missingDirectories.isEmpty { Posix.unlinkItem(sessionFile) }
        if let sessionFile { SessionFiles.release(sessionFile) }
        let alone = _isOnlyOpenInstance
        sessionFile = nil
        if alone {
            for name in prior.missingNames { Posix.removeTree(layout.root + "/" + name) }
            _removeLeftovers()
            for directory in prior.missingDirectories { _ = directory.withCString { rmdir($0) } }
        }
        _releaseLockFiles()
    }
}
