import Foundation

/// Lookups, commits, removals and metadata updates on the locked state.
extension StoreState {
    /// How many hits are kept in memory before they are written to the journal as one batch.
    static let touchFlushThreshold = 256
    /// Longer keys are refused (they would make index records unwieldy; URLs are far shorter).
    static let maximumKeyLength = 1 << 20

    /// The entry for `key` if present and unexpired, recording the hit. On a miss, first picks
    /// up what other instances appended to the journal (one `fstat` when there is nothing new).
    mutating func _lookup(_ key: String, now: Double) -> (EntryRecord, EntryLocation, verified: FileStamp?)? {
        if degraded {
            do { try _recover() } catch { return nil }
        }
        var found = _find(key)
        if found == nil, let journal, journal.mayHaveNews(layout.journal) {
            // Another instance in the middle of a write holds the lock: a miss, not a wait.
            if (try? _lockJournal(waiting: false)) != nil {
                try? _catchUp()
                _unlockJournal()
                found = _find(key)
            }
        }
        guard let (slot, record) = found else { return nil }
        if index.expires(slot) <= now {
            _ = try? _remove(key: key, version: record.id.version)
            return nil
        }
        // Recency lives in memory; the journal learns of hits in batches (see touchFlushThreshold).
        index.touch(slot, session: currentSession)
        if !index[slot].touchPending {
            index.setTouchPending(slot, true)
            pendingTouches.append(slot)
        }
        var used = record
        used.session = currentSession
        let location = _location(slot)
        let verified = index.verifiedStamp(slot)
        if pendingTouches.count + pendingVerifications.count >= Self.touchFlushThreshold { try? _flushTouches(waiting: false) }
        return (used, location, verified)
    }

    /// The location of the entry in `slot` (made anew: a path is a few dozen bytes, cheaper to
    /// build than to keep for every entry read).
    func _location(_ slot: Int32) -> EntryLocation {
        EntryLocation(path: layout.path(for: index[slot].id))
    }

    /// The current record of `key` without counting a use, its file's path and the stamp of its
    /// last verification; nil when the key has no entry.
    mutating func _peek(_ key: String) -> (record: EntryRecord, path: String, stamp: FileStamp?)? {
        guard let (slot, record) = _find(key) else { return nil }
        return (record, _location(slot).path, index.verifiedStamp(slot))
    }

    /// Remembers that the file of `key` at `version` matched its checksum with this stamp, and
    /// queues a `verified` record so that later instances (in any process) remember it too.
    mutating func _noteVerified(key: String, version: UInt64, stamp: FileStamp) {
        if let slot = index.find(key), index[slot].version == version, index.verifiedStamp(slot) != stamp {
            index.setVerified(slot, stamp)
            pendingVerifications.append((key, version, stamp))
        }
    }

    /// Step 1 of a commit (see `CacheStore.commit`): takes the journal lock, held until
    /// `_finishPromotion`, and registers the entry's file as being promoted. So while the caller
    /// renames the file into `ready/` outside the mutex, no reconciliation, in this process or
    /// another (it needs the journal lock), can see the file without its record and delete it.
    mutating func _beginPromotion(_ id: FileID) throws(FileCacheError) {
        try _ensureUsable()
        try _lockJournal()
        promotions.insert(id)
    }

    /// Step 2 of a commit, after the rename to `destination` (`layout.path(for: record.id)`;
    /// `renameError`, 0 when it succeeded): journals the
    /// entry, releases what `_beginPromotion` took, then enforces the limits. The previous
    /// version's file, if any, is deleted after the mutex is released. The caller deletes the
    /// temporary file when this throws.
    ///
    /// A pinned commit (`record.pinned`, or any commit over a pinned version of the key: a key
    /// stays pinned until it is unpinned or removed) is checked against the pinned quota here,
    /// under the lock, and journaled pinned in its own `add` record; over the quota, nothing is
    /// journaled, the promoted file is deleted and the previous version stays.
    mutating func _finishPromotion(
        _ record: EntryRecord, at destination: String, renameError error: Int32, now: Double
    ) throws(FileCacheError) -> EntryRecord {
        defer {
            promotions.remove(record.id)
            _unlockJournal()
        }
        guard error == 0 else {
            degraded = true
            throw .io(operation: "promote entry into ready/", errno: error)
        }
        do {
            try _catchUp()
        } catch {
            Posix.unlinkItem(destination)
            throw error
        }
        var record = record
        record.session = currentSession
        // The entry this commit replaces: the one of the same digest (its key is this key, but for
        // a digest shared by two keys, whose later replaces the earlier).
        let previous = index.find(record.key)
        if let previous, let created = _record(previous)?.created, created >= record.created {
            // Commit times identify versions for readers (see CacheStore.currentRecord): keep them increasing.
            record.created = created.nextUp
        }
        if let previous, index[previous].pinned { record.pinned = true }
        if record.pinned {
            do {
                try _checkPinnedQuota(key: record.key, byteCount: record.size, replacing: previous)
            } catch {
                Posix.unlinkItem(destination)
                throw error
            }
        }
        var encoder = JournalEncoder()
        let verified = _encodePendingTouches(into: &encoder)
        let before = encoder.bytes.count
        encoder.append(.add(record))
        let recordBytes = encoder.bytes.count - before
        guard recordBytes <= JournalEncoder.maximumPayload else {
            // The journal would read a record this large as damage.
            Posix.unlinkItem(destination)
            throw .io(operation: "commit: metadata too large for the index", errno: E2BIG)
        }
        let base = journal?.appliedOffset ?? 0
        do {
            try _append(encoder)
        } catch {
            // Not journaled, so not committed: take the file back out of ready/.
            Posix.unlinkItem(destination)
            throw error
        }
        _noteVerifiedOffsets(verified, base: base)
        let (slot, replaced) = index.insert(record, recordBytes: recordBytes, addOffset: base + before)
        if let replaced { pendingUnlinks.append(layout.path(for: replaced.id)) }
        _enforceLimits(now: now, protecting: slot)
        if _journalNeedsCompaction || unrecordedRemoveAll { try? _compact() }
        return record
    }

    /// Removes the entry of `key` (only at `version` when given): the journal first, then the file,
    /// so a crash in between leaves an orphan file (deleted by the next reconcile), never a record
    /// without its file. When the journal refuses the write, see `_finishEviction`. Returns 0, or
    /// the `errno` of a removal that does not last (see `_finishEviction`); throws `busy` when
    /// the journal lock stays held by another instance.
    @discardableResult
    mutating func _remove(key: String, version: UInt64?) throws(FileCacheError) -> Int32 {
        try _lockJournal()
        defer { _unlockJournal() }
        try? _catchUp()
        let found: Int32?
        if let version {
            found = index.find(key).flatMap { index[$0].version == version ? $0 : nil }
        } else {
            found = _find(key)?.slot
        }
        guard let slot = found else { return 0 }
        var encoder = JournalEncoder()
        var paths: [String] = []
        _evict(slot, into: &encoder, paths: &paths)
        return _finishEviction(encoder, paths)
    }

    /// Takes `slot` out of the index, adding its `remove` record and file path to the batch.
    mutating func _evict(_ slot: Int32, into encoder: inout JournalEncoder, paths: inout [String]) {
        let entry = index[slot]
        // Without its record (outside damage to the journal) the entry still goes from this
        // instance; the next opening's replay drops a record whose file is gone.
        if let key = _keyForRemoval(slot) {
            encoder.append(.remove(key: key, version: entry.version))
            paths.append(layout.path(for: entry.id))
        } else {
            pendingUnlinks.append(layout.path(for: entry.id))
        }
        index.remove(slot)
    }

    /// The key of the entry in `slot`, for its `remove` record: only the key is read back from
    /// its `add` record (a trim pass evicts many entries, and the rest of each record, its
    /// metadata above all, is not needed).
    private func _keyForRemoval(_ slot: Int32) -> String? {
        if let detached = index.detachedRecord(slot) { return detached.key }
        let entry = index[slot]
        guard entry.addOffset != JournalOffsets.unknown, let journal else { return nil }
        return journal.addedKey(at: Int(entry.addOffset), of: entry.id)
    }

    /// Journals a batch of removals (one `remove` record per path, in the same order) and queues
    /// their files for deletion after the mutex is released.
    ///
    /// When the journal refuses the write (a full disk whose journal needs a new block, most
    /// often), the files are deleted at once instead: that frees the space the caller removed
    /// them for, and with it room for the records, which are tried once more. Records refused
    /// again stay in `unrecordedRemovals`: appended after the next write that succeeds, and until
    /// then this instance's session file stays when it closes, so the next opening reconciles
    /// index and files as after a crash and drops the records whose files are gone. Either way a
    /// removed entry never comes back.
    ///
    /// Returns 0, or the `errno` of a file that could neither be deleted nor have its removal
    /// journaled (a read-only volume): that entry is gone from this instance only, and comes back
    /// at the next opening.
    @discardableResult
    mutating func _finishEviction(_ encoder: JournalEncoder, _ paths: [String]) -> Int32 {
        guard !paths.isEmpty else { return 0 }
        let wasDegraded = degraded
        if (try? _append(encoder)) != nil {
            pendingUnlinks.append(contentsOf: paths)
            return 0
        }
        var lasting = JournalEncoder()
        var failure: Int32 = 0
        var position = 0
        _ = encoder.bytes.withUnsafeBytes { raw in
            JournalDecoder.decode(raw) { record, _ in
                defer { position += 1 }
                guard position < paths.count else { return }
                let error = Posix.unlinkItem(paths[position])
                if error == 0 || error == ENOENT {
                    lasting.append(record)
                } else {
                    failure = error
                }
            }
        }
        guard !lasting.isEmpty else { return failure }
        if (try? _append(lasting)) != nil {
            degraded = wasDegraded
        } else {
            unrecordedRemovals.append(contentsOf: lasting)
        }
        return failure
    }

    /// Replaces the metadata of `key`'s entry; does nothing when there is none.
    mutating func _updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws(FileCacheError) {
        try _ensureUsable()
        try _lockJournal()
        defer { _unlockJournal() }
        try _catchUp()
        guard let (slot, _) = _find(key) else { return }
        var encoder = JournalEncoder()
        encoder.append(.metadata(key: key, version: index[slot].version, metadata: metadata))
        guard encoder.bytes.count <= JournalEncoder.maximumPayload else {
            throw .io(operation: "update metadata: too large for the index", errno: E2BIG)
        }
        let base = journal?.appliedOffset ?? 0
        try _append(encoder)
        index.replaceMetadata(slot, with: metadata, recordBytes: _addRecordSize(slot, key: key, metadata: metadata), offset: base)
    }

    /// Empties the cache and leaves it working (HJCache's big cache deleted its bucket
    /// directories and never recreated them): writes an empty journal, moves `ready/` aside in
    /// one rename, recreates it, and queues the old tree for deletion after the mutex is released.
    /// While commits of this instance are between their rename and their record (`promotions`),
    /// `ready/` stays, and the files are deleted one by one but theirs: a commit that comes after
    /// `removeAll` keeps its entry, as when the two were one step each.
    ///
    /// When the empty journal cannot be written (a full disk), the files are deleted first, under
    /// the lock, and the journal is written again with the space they held. If that fails too,
    /// `unrecordedRemoveAll` is set: the next commit, trim or closing compacts again, and until
    /// one succeeds this instance's session file stays, so the next opening reconciles and drops
    /// every record whose file is gone. Throws only when the files could not be deleted either
    /// (then the entries come back at the next opening).
    mutating func _removeAll() throws(FileCacheError) {
        try _ensureUsable()
        try _lockJournal()
        defer { _unlockJournal() }
        index.removeAll()
        pendingTouches.removeAll()
        let wasDegraded = degraded
        var refusal: FileCacheError?
        do { try _compact() } catch { refusal = error }
        let trash = layout.root + "/ready.trash-" + FileNames.uniqueSuffix()
        if promotions.isEmpty, Posix.renameItem(layout.ready, trash) == 0 {
            if refusal == nil {
                pendingTreeRemovals.append(trash)
            } else {
                Posix.removeTree(trash)  // now: the journal needs the space
            }
        }
        let made = Posix.makeDirectory(layout.ready)
        guard made == 0 else {
            degraded = true
            throw .io(operation: "recreate ready/", errno: made)
        }
        // If the rename failed, whatever is still in ready/ is unindexed now: delete it.
        _reconcile()
        guard let first = refusal else { return }
        if (try? _compact()) != nil {
            degraded = wasDegraded
            return
        }
        // What `_reconcile()` could not delete stays named by the journal: it comes back.
        let left = ReadyListing.take(layout, early: false).buckets.reduce(0) { $0 + $1.count }
        if left > promotions.count { throw first }
        unrecordedRemoveAll = true
    }

    /// Live records, most recently used first.
    func _recordsByRecency(limit: Int) -> [EntryRecord] {
        let slots = index.slotsByRecency().prefix(max(0, limit))
        return _withJournalBytes { raw in slots.compactMap { _record($0, in: raw) } }
    }

    /// The records last used in the most recent session before this one, most recent first.
    func _recordsUsedInPreviousSession(limit: Int) -> [EntryRecord] {
        var previous: UInt32 = 0
        for slot in index.slots where slot.live && slot.session < currentSession {
            previous = max(previous, slot.session)
        }
        guard previous > 0 else { return [] }
        let slots = index.slotsByRecency().lazy.filter { index[$0].session == previous }.prefix(max(0, limit))
        return _withJournalBytes { raw in slots.compactMap { _record($0, in: raw) } }
    }
}
