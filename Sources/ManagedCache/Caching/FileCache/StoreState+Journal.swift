#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading, applying, appending to and compacting the journal. All of it with the journal lock held.
extension StoreState {
    /// Rebuilds the index from the whole journal. Returns whether the journal was damaged (a
    /// torn or corrupt frame, or no valid header): the caller then repairs.
    mutating func _replayWholeJournal() throws(FileCacheError) -> Bool {
        guard let journal else { return true }
        let (outcome, error) = journal._withWholeContents { raw in _replay(raw) }
        guard let outcome else {
            degraded = true
            throw .io(operation: "read index journal", errno: error)
        }
        if outcome.foreignLayout {
            index.removeAll()
            degraded = true
            throw .io(operation: "open: the directory holds a cache of another layout", errno: EINVAL)
        }
        self.journal?.markApplied(outcome.consumed, fromStart: true)
        return outcome.damaged
    }

    /// What replaying a journal's bytes found.
    struct ReplayOutcome {
        /// Bytes of whole, valid frames from the start.
        var consumed: Int
        /// Whether anything followed them (a torn or damaged frame), or there was no valid header.
        var damaged: Bool
        /// Whether the header names the other layout (nothing was applied then).
        var foreignLayout: Bool
    }

    /// Rebuilds `index` (and `highestSession`) from a whole journal's bytes. Touches no file: the
    /// deferred opening runs it on a scratch state outside the store's mutex.
    mutating func _replay(_ raw: UnsafeRawBufferPointer) -> ReplayOutcome {
        index.removeAll()
        pendingTouches.removeAll()
        pendingVerifications.removeAll()
        var sawHeader = false
        var foreignLayout = false
        // About one record per 80 bytes: reserving avoids rehashing 100,000 keys several times.
        index.reserve(raw.count / 80)
        var offset = 0
        let (consumed, damaged) = JournalDecoder.decode(raw) { record, size in
            defer { offset += size }
            if !sawHeader {
                if case .header(let kind, let generation) = record {
                    sawHeader = true
                    foreignLayout = kind != layout.kind.rawValue
                    journalGeneration = generation
                }
                return
            }
            if !foreignLayout { _apply(record, size: size, at: offset) }
        }
        return ReplayOutcome(consumed: consumed, damaged: damaged || !sawHeader, foreignLayout: foreignLayout)
    }

    /// Applies one record of `size` bytes, framing included, that starts at `offset` in the
    /// journal (while replaying or catching up).
    mutating func _apply(_ record: JournalRecord, size: Int, at offset: Int) {
        switch record {
        case .header:
            break
        case .add(let entry):
            let slot = index.insert(entry, bucket: layout.bucket(of: entry.id), recordBytes: size).slot
            index.setAddOffset(slot, offset)
        case .remove(let key, let version):
            if let slot = index.find(key), index[slot].record.id.version == version {
                index.remove(slot)
            }
        case .touch(let key, let session):
            if let slot = index.find(key) { index.touch(slot, session: session) }
        case .metadata(let key, let version, let metadata):
            if let slot = index.find(key), index[slot].record.id.version == version {
                index.replaceMetadata(slot, with: metadata)
                index.setMetadataOffset(slot, offset)
            }
        case .session(let session):
            highestSession = max(highestSession, session)
        case .verified(let key, let version, let stamp):
            if let slot = index.find(key), index[slot].record.id.version == version {
                index.setVerifiedStamp(slot, stamp)
                index.setVerifiedOffset(slot, offset)
            }
        case .pin(let key, let version, let pinned):
            // Applied whatever the quota: the instance that wrote it checked its own, and a pin is
            // never dropped behind the user's back.
            if let slot = index.find(key), index[slot].record.id.version == version {
                index.setPinned(slot, pinned)
            }
        }
    }

    /// Brings the index up to date with the journal: applies what other instances appended,
    /// reloads after another instance compacted it, reopens everything when the directory was
    /// removed and recreated, and repairs a damaged tail.
    mutating func _catchUp() throws(FileCacheError) {
        guard let journal else {
            try _reattach()
            return
        }
        let (pathState, size) = journal.state(layout.journal)
        switch pathState {
        case .missing:
            try _reattach()
        case .replaced:
            if _lockFileReplaced() {
                try _reattach()
            } else {
                try _reload()
            }
        case .same:
            guard size != journal.appliedOffset else { return }
            let (tail, error) = journal.readUnapplied()
            guard let tail else {
                degraded = true
                throw .io(operation: "read index journal", errno: error)
            }
            var offset = journal.appliedOffset
            let (consumed, damaged) = tail.withUnsafeBytes { raw in
                JournalDecoder.decode(raw) { record, size in
                    _apply(record, size: size, at: offset)
                    offset += size
                }
            }
            self.journal?.markApplied(consumed)
            if damaged {
                // Appends are whole frames written under this lock, so a bad frame here is a
                // torn write of a killed process or outside damage: rebuild the journal.
                try _repair()
            }
        }
    }

    /// Whether `root/lock` now names a different file than the one this instance locks (the
    /// directory was removed and recreated): then every descriptor must be reopened.
    func _lockFileReplaced() -> Bool {
        guard let onDisk = Posix.status(layout.journalLock), let open = Posix.status(of: journalLockDescriptor) else {
            return true
        }
        return onDisk.st_ino != open.st_ino || onDisk.st_dev != open.st_dev
    }

    /// Reopens the journal another instance replaced and rebuilds the index from it.
    mutating func _reload() throws(FileCacheError) {
        let (reopened, error) = JournalFile.openExisting(layout.journal)
        guard let reopened else {
            if error == ENOENT {
                try _reattach()
                return
            }
            degraded = true
            throw .io(operation: "reopen index journal", errno: error)
        }
        journal?.close()
        journal = reopened
        if try _replayWholeJournal() { try _repair() }
    }

    /// Reopens the cache after its directory or journal disappeared (see `_attach`).
    mutating func _reattach() throws(FileCacheError) {
        // The journal lock descriptor is about to be replaced: release the old lock first, and
        // take the new one again for the caller (the depth it had).
        let depth = journalLockDepth
        if depth > 0 && journalLockDescriptor >= 0 { _ = Posix.lockFile(journalLockDescriptor, LOCK_UN) }
        journalLockDepth = 0
        defer { journalLockDepth = depth }
        try _attach(initialOpen: false, now: nil)
        if depth > 0 {
            try _lockJournal()
            journalLockDepth = 0  // the deferred restore sets the caller's depth
        }
    }

    /// Appends frames; on failure marks the cache degraded and throws.
    mutating func _append(_ encoder: JournalEncoder) throws(FileCacheError) {
        guard !encoder.isEmpty else { return }
        guard journal != nil else {
            degraded = true
            throw .io(operation: "append to index journal", errno: ENOENT)
        }
        // Only with the journal lock held are the bytes past the applied size certainly ours.
        _publishMissShortcut(appending: journalLockDepth > 0 ? encoder.bytes.count : 0)
        let error = journal!._append(encoder.bytes)
        if error != 0 {
            degraded = true
            _publishMissShortcut()
            throw .io(operation: "append to index journal", errno: error)
        }
        _publishMissShortcut()
        // After the caller's records, so the offsets it computed from the applied size hold.
        if !unrecordedRemovals.isEmpty, journalLockDepth > 0 { _recordUnrecordedRemovals() }
    }

    /// Writes the removals the journal refused earlier (`_finishEviction`, `_removeAll`): appends
    /// their `remove` records (a record of a version since replaced changes nothing), or, after a
    /// `removeAll`, compacts. Best effort: what is refused again is tried again later. With the
    /// journal lock held; a compaction only where no caller holds offsets into the journal.
    mutating func _recordUnrecordedRemovals() {
        if unrecordedRemoveAll {
            try? _compact()  // clears both on success
            return
        }
        guard !unrecordedRemovals.isEmpty, journal != nil else { return }
        _publishMissShortcut(appending: unrecordedRemovals.bytes.count)
        if journal!._append(unrecordedRemovals.bytes) == 0 { unrecordedRemovals = JournalEncoder() }
        _publishMissShortcut()
    }

    /// Encodes the pending hits as `touch` records and the pending verifications as `verified`
    /// records (those of versions still current), and clears both. Returns where in the encoder
    /// each `verified` record starts, for `_noteVerifiedOffsets` once they are appended.
    @discardableResult
    mutating func _encodePendingTouches(into encoder: inout JournalEncoder) -> [(slot: Int32, position: Int)] {
        for slot in pendingTouches where index[slot].live && index[slot].touchPending {
            encoder.append(.touch(key: index[slot].record.key, session: index[slot].record.session))
            index.setTouchPending(slot, false)
        }
        pendingTouches.removeAll(keepingCapacity: true)
        var positions: [(slot: Int32, position: Int)] = []
        for (key, version, stamp) in pendingVerifications {
            if let slot = index.find(key), index[slot].record.id.version == version, index.verifiedStamp(slot) == stamp {
                positions.append((slot, encoder.bytes.count))
                encoder.append(.verified(key: key, version: version, stamp: stamp))
            }
        }
        pendingVerifications.removeAll(keepingCapacity: true)
        return positions
    }

    /// Records where the `verified` records `_encodePendingTouches` encoded now start in the
    /// journal: the encoder's bytes were appended at `base`.
    mutating func _noteVerifiedOffsets(_ positions: [(slot: Int32, position: Int)], base: Int) {
        for (slot, position) in positions where index[slot].live {
            index.setVerifiedOffset(slot, base + position)
        }
    }

    /// Writes the pending hits and verifications to the journal; without `waiting` (a lookup's
    /// batch), only if the journal lock is free (they stay pending otherwise).
    mutating func _flushTouches(waiting: Bool = true) throws(FileCacheError) {
        guard !pendingTouches.isEmpty || !pendingVerifications.isEmpty else { return }
        try _lockJournal(waiting: waiting)
        defer { _unlockJournal() }
        try _catchUp()
        var encoder = JournalEncoder()
        let verified = _encodePendingTouches(into: &encoder)
        let base = journal?.appliedOffset ?? 0
        try _append(encoder)
        _noteVerifiedOffsets(verified, base: base)
    }

    /// Rewrites the journal as a header, the session count and one `add` record per live entry,
    /// least recently used first (so replaying it restores the LRU order), and atomically
    /// replaces the old one. Other instances notice the new inode and reload.
    mutating func _compact() throws(FileCacheError) {
        var encoder = JournalEncoder()
        let generation = UInt64.random(in: 0...UInt64.max)
        encoder.append(.header(layout: layout.kind.rawValue, generation: generation))
        encoder.append(.session(highestSession))
        let order = index.slotsByRecency().reversed()
        var offsets: [JournalOffsets] = []
        offsets.reserveCapacity(order.count)
        for slot in order {
            var entry = JournalOffsets(add: JournalOffsets.stored(encoder.bytes.count))
            encoder.append(.add(index[slot].record))
            if let stamp = index.verifiedStamp(slot) {
                entry.verified = JournalOffsets.stored(encoder.bytes.count)
                encoder.append(.verified(key: index[slot].record.key, version: index[slot].record.id.version, stamp: stamp))
            }
            offsets.append(entry)
            index.setTouchPending(slot, false)
        }
        pendingTouches.removeAll()
        pendingVerifications.removeAll()
        let (written, error) = JournalFile.writeNew(encoder.bytes, at: layout.journal)
        guard let written else {
            degraded = true
            throw .io(operation: "compact index journal", errno: error)
        }
        journal?.close()
        journal = written
        journalGeneration = generation
        // The new journal is the index: what was removed is not in it.
        unrecordedRemovals = JournalEncoder()
        unrecordedRemoveAll = false
        repairUnfinished = false
        // The path names the new file now: lookups answer misses from it at once, not after the
        // offsets and the lookup table below.
        _publishMissShortcut()
        for (slot, entry) in zip(order, offsets) { index.setOffsets(slot, entry) }
        _writeLookupTable()
    }
}
