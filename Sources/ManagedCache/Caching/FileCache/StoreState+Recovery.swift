#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Making index and files agree after a crash, and getting back on its feet after the disk failed.
extension StoreState {
    /// Makes the directory usable again after an I/O failure: recreates the directories and,
    /// when the journal or the whole directory was lost, reopens everything (dropping entries
    /// whose files went with it). Throws while the disk still refuses.
    mutating func _recover() throws(FileCacheError) {
        // Whatever went wrong (a file the umask left unreadable among them), set each new entry
        // file's mode from now on, as when the umask was not known.
        entryFilesNeedModeSettled = true
        let directories = layout.makeDirectories()
        guard directories == 0 else {
            degraded = true
            throw .io(operation: "create cache directories", errno: directories)
        }
        try _lockJournal()
        defer { _unlockJournal() }
        try _catchUp()
        if reconciliationPending {
            // An opening after a crash could not take the lock for its reconciliation.
            try _repair()
            reconciliationPending = false
        }
        degraded = false
    }

    /// Recovers first when an earlier operation failed.
    mutating func _ensureUsable() throws(FileCacheError) {
        if degraded { try _recover() }
    }

    /// Reconciles and rewrites a journal found damaged.
    mutating func _repair() throws(FileCacheError) {
        _reconcile()
        try _compact()
    }

    /// Makes index and directories agree: lists every bucket directory, stats its files, drops
    /// records whose file is missing or of the wrong size, and deletes every other file or
    /// directory in `ready/`.
    ///
    /// Safe while other instances run: they put a file into `ready/` (rename) and journal its
    /// entry within one hold of the journal lock, so while this instance holds it every file that
    /// belongs to an entry is in the index, but for this instance's own commits between their
    /// rename and their record (`promotions`), which are skipped. A file another instance evicted but has not unlinked
    /// yet is deleted here instead; its own unlink then finds nothing, which is fine.
    mutating func _reconcile() {
        let found = _compare(.take(layout, early: false))
        for position in found.indices where index.slots[position].live && !found[position] {
            index.remove(Int32(position))
        }
    }

    /// After a crash, with an intact journal: reconciles as `_reconcile()` does, against `listing`
    /// (taken before the lock), but journals the removal of each record whose file is gone or
    /// damaged rather than rewriting the whole journal. (Rewriting 100,000 entries held the
    /// cache's lock for most of the install of an opening after a crash, and hits wait for that
    /// lock.) An oversized journal is still compacted by the install.
    mutating func _reconcileAfterCrash(listing: ReadyListing) {
        let found = _compare(listing)
        var encoder = JournalEncoder()
        var paths: [String] = []
        for position in found.indices where index.slots[position].live && !found[position] {
            _evict(Int32(position), into: &encoder, paths: &paths)
        }
        _finishEviction(encoder, paths)
    }

    /// Deletes what no live record names in `listing`, and returns, per slot, whether its file
    /// exists with the recorded size.
    private func _compare(_ listing: ReadyListing) -> [Bool] {
        var found = [Bool](repeating: false, count: index.slots.count)
        for (bucket, files) in listing.buckets.enumerated() {
            var strays: [String] = []
            for file in files {
                if let id = file.id, promotions.contains(id) { continue }  // being committed
                // The index files entries by digest: the slot of the file's digest, at its version.
                if let id = file.id, layout.bucket(of: id) == bucket,
                    let slot = index.find(digestHigh: id.digestHigh, digestLow: id.digestLow),
                    index[slot].version == id.version, file.size == index[slot].size
                {
                    found[Int(slot)] = true
                    continue
                }
                strays.append(file.name)
            }
            let directory = layout.bucketDirectories[bucket]
            for name in strays { Posix.removeTree(directory + "/" + name) }
        }
        for name in listing.foreignNames { Posix.removeTree(layout.ready + "/" + name) }
        if listing.isEarly {
            // Committed by another instance after the listing: looked up again.
            for (position, slot) in index.slots.enumerated() where slot.live && !found[position] {
                var info = stat()
                if stat(layout.path(for: slot.id), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                    Int(info.st_size) == slot.size
                {
                    found[position] = true
                }
            }
        }
        return found
    }

    /// Deletes everything in `loading/`: writes of instances that no longer exist. Only called
    /// when this is the only open instance, at its first open.
    func _emptyLoadingDirectory() {
        guard let names = Posix.names(in: layout.loading) else { return }
        for name in names { Posix.removeTree(layout.loading + "/" + name) }
    }

    /// Deletes what interrupted compactions (`journal.tmp-*`) and `removeAll`s (`ready.trash-*`)
    /// left in the root. Only when alone: another instance may be writing one right now.
    func _removeLeftovers() {
        guard let names = Posix.names(in: layout.root) else { return }
        for name in names where name.hasPrefix("journal.tmp-") || name.hasPrefix("ready.trash-") {
            Posix.removeTree(layout.root + "/" + name)
        }
    }
}
