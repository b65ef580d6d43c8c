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
        let directories = layout.makeDirectories()
        guard directories == 0 else {
            degraded = true
            throw .io(operation: "create cache directories", errno: directories)
        }
        _lockJournal()
        defer { _unlockJournal() }
        try _catchUp()
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

    /// Makes index and directories agree: lists every bucket directory (names only), stats the
    /// files the index names (to catch a wrong size), drops records whose file is missing or of
    /// the wrong size, and deletes every other file or directory in `ready/`.
    ///
    /// Safe while other instances run: they put a file into `ready/` (rename) and journal its
    /// entry within one hold of the journal lock, so while this instance holds it every file that
    /// belongs to an entry is in the index, but for this instance's own commits between their
    /// rename and their record (`promotions`), which are skipped. A file another instance evicted but has not unlinked
    /// yet is deleted here instead; its own unlink then finds nothing, which is fine.
    mutating func _reconcile() {
        let found = _scanReadyDirectories()
        for position in found.indices where index.slots[position].live && !found[position] {
            index.remove(Int32(position))
        }
    }

    /// Lists `ready/` (every bucket), deletes what no live record names, and returns, per slot,
    /// whether its file exists with the recorded size.
    private func _scanReadyDirectories() -> [Bool] {
        var expected: [FileID: Int32] = [:]
        expected.reserveCapacity(index.count)
        for (position, slot) in index.slots.enumerated() where slot.live {
            expected[slot.record.id] = Int32(position)
        }
        var found = [Bool](repeating: false, count: index.slots.count)
        for bucket in 0..<layout.bucketCount {
            let directory = layout.bucketDirectories[bucket]
            var strays: [String] = []
            _ = Posix.forEachName(in: directory) { name, directoryFD, _ in
                if let id = FileID(fileName: name), promotions.contains(id) { return }  // being committed
                if let id = FileID(fileName: name), layout.bucket(of: id) == bucket, let slot = expected[id] {
                    var info = stat()
                    if fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                        (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) == index[slot].record.size
                    {
                        found[Int(slot)] = true
                        return
                    }
                }
                strays.append(String(cString: name))
            }
            for name in strays { Posix.removeTree(directory + "/" + name) }
        }
        if layout.kind == .bucketed {
            var strays: [String] = []
            _ = Posix.forEachName(in: layout.ready) { name, _, _ in
                if FileNames.bucket(named: name) == nil { strays.append(String(cString: name)) }
            }
            for name in strays { Posix.removeTree(layout.ready + "/" + name) }
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
