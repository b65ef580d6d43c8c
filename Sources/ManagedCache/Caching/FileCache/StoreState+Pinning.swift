/// Pinning and unpinning committed entries, on the locked state.
///
/// A pin is journaled as a `pin` record of the entry's version (`JournalRecord.pin`), or, at
/// commit, inside the entry's own `add` record (`_finishPromotion`), so a crash never separates
/// an entry from its pin. Pinned entries leave the bucket lists and the expiry heap
/// (`CacheIndex.setPinned`): no limit, trim or expiry removes them; removals and `removeAll` do.
extension StoreState {
    /// Throws `pinnedQuotaExceeded` when pinning `byteCount` more bytes under `key` (replacing the
    /// entry in `replacing`, whose pinned bytes are given back) would put the pinned entries over
    /// the pinned quota.
    func _checkPinnedQuota(key: String, byteCount: Int, replacing: Int32?) throws(FileCacheError) {
        guard let quota = limits.pinnedByteLimit else { return }
        var others = index.pinnedBytes
        if let replacing, index[replacing].pinned { others -= index[replacing].size }
        if others + byteCount > quota {
            throw .pinnedQuotaExceeded(key: key, byteCount: byteCount, pinnedBytes: others, quota: quota)
        }
    }

    /// Pins (`pinned`) or unpins the current entry of `key` and returns its record. Pinning a key
    /// without an entry (or whose entry expired: a lookup would not find it either) throws
    /// `noEntry`; unpinning one returns nil. Pinning past the quota throws `pinnedQuotaExceeded`
    /// and changes nothing. An unpinned entry counts against the limits again at once, as the
    /// most recently used entry, kept like a fresh commit even when it alone exceeds them.
    mutating func _setPinned(_ pinned: Bool, forKey key: String, now: Double) throws(FileCacheError) -> EntryRecord? {
        try _ensureUsable()
        try _lockJournal()
        defer { _unlockJournal() }
        try _catchUp()
        guard let (slot, record) = _find(key), index.expires(slot) > now else {
            if let (expired, _) = _find(key) { try _remove(key: key, version: index[expired].version) }
            if pinned { throw .noEntry(key: key) }
            return nil
        }
        guard record.pinned != pinned else { return record }
        if pinned { try _checkPinnedQuota(key: key, byteCount: record.size, replacing: nil) }
        var encoder = JournalEncoder()
        encoder.append(.pin(key: key, version: record.id.version, pinned: pinned))
        try _append(encoder)
        index.setPinned(slot, pinned)
        if !pinned {
            _enforceLimits(now: now, protecting: slot)
            if _journalNeedsCompaction || unrecordedRemoveAll { try? _compact() }
        }
        var changed = record
        changed.pinned = pinned
        changed.session = index[slot].session
        return changed
    }

    /// The pinned entries' records, most recently used (or pinned) first.
    func _pinnedRecords() -> [EntryRecord] {
        let slots = index.pinnedSlots()
        return _withJournalBytes { raw in slots.compactMap { _record($0, in: raw) } }
    }
}
