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
        let (consumed, damaged) = JournalDecoder.decode(raw, forIndex: true) { record, size in
            defer { offset += size }
            if !sawHeader {
                if case .header(let kind, let generation) = record {
                    sawHeader = true
                    foreignLayout = kind != layout.kind.rawValue
                    journalGeneration = generation
                }
                return
            }
            if !foreignLayout { _apply(Self._whole(record, at: offset, in: raw, from: 0), size: size, at: offset) }
        }
        index.pack()
        return ReplayOutcome(consumed: consumed, damaged: damaged || !sawHeader, foreignLayout: foreignLayout)
    }

    /// Applies one record of `size` bytes, framing included, that starts at `offset` in the
    /// journal (while replaying or catching up), decoded `forIndex` (an `add` record without its
    /// key: the index keeps none).
    mutating func _apply(_ record: JournalRecord, size: Int, at offset: Int) {
        switch record {
        case .header:
            break
        case .add(let entry):
            index.insert(entry, recordBytes: size, addOffset: offset)
        case .remove(let key, let version):
            if let slot = index.find(key), index[slot].version == version {
                index.remove(slot)
            }
        case .touch(let key, let session):
            if let slot = index.find(key) { index.touch(slot, session: session) }
        case .metadata(let key, let version, let metadata):
            if let slot = index.find(key), index[slot].version == version {
                index.replaceMetadata(slot, with: metadata, recordBytes: _addRecordSize(slot, key: key, metadata: metadata), offset: offset)
            }
        case .session(let session):
            highestSession = max(highestSession, session)
        case .verified(let key, let version, let stamp):
            if let slot = index.find(key), index[slot].version == version {
                index.setVerified(slot, stamp, offset: offset)
            }
        case .pin(let key, let version, let pinned):
            // Applied whatever the quota: the instance that wrote it checked its own, and a pin is
            // never dropped behind the user's back.
            if let slot = index.find(key), index[slot].version == version {
                index.setPinned(slot, pinned)
            }
        }
    }

    /// `record`, decoded for the index, as it is whole when the index must keep it whole: an `add`
    /// record past 4 GiB, where no offset can point at it (`raw` holds the journal from `base`).
    static func _whole(_ record: JournalRecord, at offset: Int, in raw: UnsafeRawBufferPointer, from base: Int) -> JournalRecord {
        guard case .add = record, JournalOffsets.stored(offset) == JournalOffsets.unknown else { return record }
        return JournalDecoder.frame(at: offset - base, in: raw) ?? record
    }

    /// The size the `add` record of the entry in `slot` takes with `key` and `metadata`.
    func _addRecordSize(_ slot: Int32, key: String, metadata: FileCacheMetadata) -> Int {
        let entry = index[slot]
        let record = EntryRecord(
            key: key, id: entry.id, size: entry.size, checksum: entry.checksumIsCRC32 ? .crc32(0) : .xxh64(0), created: 0,
            session: entry.session, metadata: metadata, pinned: entry.pinned)
        return JournalEncoder.addRecordSize(record)
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
            let start = offset
            let (consumed, damaged) = tail.withUnsafeBytes { raw in
                JournalDecoder.decode(raw, forIndex: true) { record, size in
                    _apply(Self._whole(record, at: offset, in: raw, from: start), size: size, at: offset)
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
            // A record the journal cannot give back loses its hit: recency only.
            if let key = _record(slot)?.key { encoder.append(.touch(key: key, session: index[slot].session)) }
            index.setTouchPending(slot, false)
        }
        pendingTouches.removeAll(keepingCapacity: true)
        var positions: [(slot: Int32, position: Int)] = []
        for (key, version, stamp) in pendingVerifications {
            if let slot = index.find(key), index[slot].version == version, index.verifiedStamp(slot) == stamp {
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
        // The records the new offsets cannot point at (past 4 GiB), by their place in `offsets`.
        var detached: [Int: EntryRecord] = [:]
        var lost: [Int32] = []
        _withJournalBytes { raw in
            for slot in order {
                guard let record = _record(slot, in: raw) else {
                    // The journal no longer gives the record back (outside damage): the entry
                    // goes, as a damaged frame's would.
                    lost.append(slot)
                    continue
                }
                var entry = JournalOffsets(add: JournalOffsets.stored(encoder.bytes.count))
                encoder.append(.add(record))
                if let stamp = index.verifiedStamp(slot) {
                    entry.verified = JournalOffsets.stored(encoder.bytes.count)
                    encoder.append(.verified(key: record.key, version: record.id.version, stamp: stamp))
                }
                if entry.add == JournalOffsets.unknown { detached[offsets.count] = record }
                offsets.append(entry)
            }
        }
        if !lost.isEmpty, offsets.isEmpty {
            // Not one record could be read back (the journal is unreadable, not damaged here and
            // there): keep the index and the journal as they are rather than drop every entry.
            degraded = true
            throw .io(operation: "compact index journal: read its records", errno: EIO)
        }
        for slot in order { index.setTouchPending(slot, false) }
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
        var kept = order.makeIterator()
        var position = 0
        let lostSet = Set(lost)
        while let slot = kept.next() {
            guard !lostSet.contains(slot) else { continue }
            index.setOffsets(slot, offsets[position], record: detached[position])
            position += 1
        }
        for slot in lost {
            pendingUnlinks.append(layout.path(for: index[slot].id))
            index.remove(slot)
        }
        _writeLookupTable()
    }
}

/// What the index leaves in the journal: the records of its entries, read back when a lookup or a
/// rare path needs more than the slot holds (see `IndexSlot`).
extension StoreState {
    /// The whole record of the live entry in `slot`: its `add` record (and its latest `metadata`
    /// record) read from the journal, `raw` when given (the whole journal mapped, for passes over
    /// many entries), with the slot's session and pin. Nil when the journal cannot be read there
    /// or holds something else (then the entry cannot be served: callers treat it as missing).
    func _record(_ slot: Int32, in raw: UnsafeRawBufferPointer? = nil) -> EntryRecord? {
        let entry = index[slot]
        var record: EntryRecord
        if let detached = index.detachedRecord(slot) {
            record = detached
        } else {
            guard case .add(let found)? = _journalRecord(at: entry.addOffset, in: raw), found.id == entry.id else { return nil }
            record = found
            if let metadata = index.detachedMetadata(slot) {
                record.metadata = metadata
            } else {
                let offset = index.offsets(slot).metadata
                if offset != 0 {
                    guard case .metadata(_, let version, let metadata)? = _journalRecord(at: offset, in: raw), version == entry.version
                    else { return nil }
                    record.metadata = metadata
                }
            }
        }
        record.session = entry.session
        record.pinned = entry.pinned
        return record
    }

    /// The record of the frame at `offset` in the journal (or in `raw`, its bytes).
    private func _journalRecord(at offset: UInt32, in raw: UnsafeRawBufferPointer?) -> JournalRecord? {
        guard offset != JournalOffsets.unknown else { return nil }
        if let raw { return JournalDecoder.frame(at: Int(offset), in: raw) }
        return journal?.record(at: Int(offset))
    }

    /// The live entry of `key` and its record: the slot of `key`'s digest, and the key in its
    /// record byte for byte (a key never gets the entry of another key with the same digest).
    func _find(_ key: String) -> (slot: Int32, record: EntryRecord)? {
        guard let slot = index.find(key), let record = _record(slot), record.key.utf8.elementsEqual(key.utf8) else { return nil }
        return (slot, record)
    }

    /// Calls `body` with the journal mapped (nil when it cannot be: `_record` then reads frame by
    /// frame), for passes that read the records of many entries.
    func _withJournalBytes<T>(_ body: (UnsafeRawBufferPointer?) -> T) -> T {
        if let journal, let result = journal._withWholeContents({ body($0) }).result { return result }
        return body(nil)
    }
}
