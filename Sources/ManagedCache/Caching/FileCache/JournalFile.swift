#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One instance's open descriptor on the journal, and how much of it the instance has applied.
///
/// Appends are made with the journal lock held and after catching up, so the instance's applied
/// offset is the end of the file when it writes; a failed or short append is truncated away at
/// once, so a disk-full error cannot leave a torn frame in front of later records. Compaction
/// writes a complete new journal to a temporary file, `fsync`s it and renames it over the old one:
/// other instances notice that the path names another inode and reload.
struct JournalFile {
    /// How the journal's path relates to the file this instance has open.
    enum PathState {
        /// The path still names the open file.
        case same
        /// The path names another file: the journal was compacted or rewritten by another instance.
        case replaced
        /// Nothing is at the path: the cache directory was removed.
        case missing
    }

    private(set) var descriptor: Int32
    private(set) var device: UInt64
    private(set) var inode: UInt64
    /// Everything before this offset has been applied to the in-memory index.
    private(set) var appliedOffset = 0

    private init(descriptor: Int32, info: stat) {
        self.descriptor = descriptor
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }

    /// Opens the existing journal at `path`; nil with `errno` when there is none or it cannot be opened.
    static func openExisting(_ path: String) -> (journal: JournalFile?, errno: Int32) {
        let fd = Posix.openFile(path, O_RDWR | O_APPEND)
        guard fd >= 0 else { return (nil, -fd) }
        guard let info = Posix.status(of: fd) else {
            let error = errno
            Posix.closeFile(fd)
            return (nil, error)
        }
        return (JournalFile(descriptor: fd, info: info), 0)
    }

    /// Writes `contents` as the complete new journal at `path`, atomically: temporary file,
    /// `fsync`, `rename`. The `fsync` is one of the two places the caches flush to disk: without
    /// it a power failure right after the rename could leave an empty journal in place of the
    /// index (process crashes do not need it; the kernel keeps the written pages).
    static func writeNew(_ contents: [UInt8], at path: String) -> (journal: JournalFile?, errno: Int32) {
        let temporary = path + ".tmp-" + FileNames.uniqueSuffix()
        let fd = Posix.openFile(temporary, O_RDWR | O_APPEND | O_CREAT | O_EXCL)
        guard fd >= 0 else { return (nil, -fd) }
        var error = contents.withUnsafeBytes { Posix.writeAll(fd, $0) }
        if error == 0 { error = Posix.synchronize(fd) }
        if error == 0 { error = Posix.renameItem(temporary, path) }
        guard error == 0, let info = Posix.status(of: fd) else {
            if error == 0 { error = errno }
            Posix.closeFile(fd)
            Posix.unlinkItem(temporary)
            return (nil, error)
        }
        var journal = JournalFile(descriptor: fd, info: info)
        journal.appliedOffset = contents.count
        return (journal, 0)
    }

    /// Whether the path still names this file, and the file's size. One `fstat` when nothing
    /// was replaced: a journal replaced by compaction (or deleted with its directory) has no
    /// links left, and only then is the path looked at.
    func state(_ path: String) -> (PathState, size: Int?) {
        guard let info = Posix.status(of: descriptor) else { return (pathState(path), nil) }
        if info.st_nlink > 0 { return (.same, Int(info.st_size)) }
        return (pathState(path), Int(info.st_size))
    }

    /// Whether the path still names this file.
    func pathState(_ path: String) -> PathState {
        guard let info = Posix.status(path) else { return .missing }
        let same = UInt64(truncatingIfNeeded: info.st_dev) == device && UInt64(truncatingIfNeeded: info.st_ino) == inode
        return same ? .same : .replaced
    }

    /// The file's current size, or nil.
    var size: Int? {
        Posix.status(of: descriptor).map { Int($0.st_size) }
    }

    /// Whether another instance appended to or replaced the journal since this one last caught up.
    /// One cheap system call, no lock: used before deciding a lookup is a miss.
    func mayHaveNews(_ path: String) -> Bool {
        let (pathState, size) = state(path)
        return pathState != .same || size != appliedOffset
    }

    /// The bytes after the applied offset (everything when `fromStart`), or nil with `errno`.
    func readUnapplied(fromStart: Bool = false) -> (bytes: [UInt8]?, errno: Int32) {
        guard let end = size else { return (nil, errno) }
        let start = fromStart ? 0 : appliedOffset
        guard end > start else { return ([], 0) }
        var error: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: end - start) { buffer, count in
            let got = Posix.readFully(descriptor, into: buffer.baseAddress!, count: end - start, at: start)
            if got < 0 {
                error = Int32(-got)
                count = 0
            } else {
                count = got
            }
        }
        return error == 0 ? (bytes, 0) : (nil, error)
    }

    /// Calls `body` with the whole journal mapped into memory (read-only), or returns nil with
    /// `errno`. Replaying a large index this way skips copying it and zero-filling a buffer for
    /// it. Assumes the journal lock is held, so that no other instance truncates the file meanwhile.
    func _withWholeContents<T>(_ body: (UnsafeRawBufferPointer) -> T) -> (result: T?, errno: Int32) {
        guard let end = size else { return (nil, errno) }
        guard end > 0 else { return (body(UnsafeRawBufferPointer(start: nil, count: 0)), 0) }
        // MAP_FAILED is (void *)-1, which not every platform's overlay imports.
        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        guard let mapping = mmap(nil, end, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != failed else {
            // Fall back to reading (file systems that cannot map).
            let (bytes, error) = readUnapplied(fromStart: true)
            guard let bytes else { return (nil, error) }
            return (bytes.withUnsafeBytes(body), 0)
        }
        defer { munmap(mapping, end) }
        return (body(UnsafeRawBufferPointer(start: mapping, count: end)), 0)
    }

    /// The record of the frame that starts at `offset` (below the applied offset: bytes that never
    /// change), read with `pread`; nil when it cannot be read or does not check out.
    func record(at offset: Int) -> JournalRecord? {
        withFrame(at: offset) { JournalDecoder.frame(at: 0, in: $0) }
    }

    /// The key of the `add` record of `id` whose frame starts at `offset`, decoded no further
    /// than the identity (`JournalDecoder.addedKey`). Nil when it cannot be read, does not check
    /// out, or is not that record.
    func addedKey(at offset: Int, of id: FileID) -> String? {
        withFrame(at: offset) { JournalDecoder.addedKey(inFrame: $0, of: id) }
    }

    /// Calls `body` with the bytes of the whole frame that starts at `offset`, read with `pread`:
    /// one read of up to 512 bytes into a buffer on the stack for a usual record, a second into
    /// one of the frame's length for a longer one. Nil, without calling `body`, when the frame
    /// cannot be read or its length is impossible.
    private func withFrame<T>(at offset: Int, _ body: (UnsafeRawBufferPointer) -> T?) -> T? {
        guard offset >= 0, offset + 8 <= appliedOffset else { return nil }
        func length(_ header: UnsafeRawBufferPointer) -> Int? {
            let length = Int(header.loadUnaligned(as: UInt32.self).littleEndian)
            guard length >= 1, length <= JournalEncoder.maximumPayload, offset + 8 + length <= appliedOffset else { return nil }
            return length
        }
        let guess = min(512, appliedOffset - offset)
        var result: T?
        // The frame's length when it did not fit the first read; nil once `body` ran or the read failed.
        let longer = withUnsafeTemporaryAllocation(byteCount: guess, alignment: 8) { buffer -> Int? in
            let got = Posix.readFully(descriptor, into: buffer.baseAddress!, count: guess, at: offset)
            guard got >= 8, let length = length(UnsafeRawBufferPointer(buffer)) else { return nil }
            guard 8 + length <= got else { return length }
            result = body(UnsafeRawBufferPointer(rebasing: buffer[0..<(8 + length)]))
            return nil
        }
        guard let longer else { return result }
        var buffer = [UInt8](repeating: 0, count: 8 + longer)
        let got = buffer.withUnsafeMutableBytes { Posix.readFully(descriptor, into: $0.baseAddress!, count: 8 + longer, at: offset) }
        guard got == 8 + longer else { return nil }
        return buffer.withUnsafeBytes(body)
    }

    /// Records that `count` more bytes (from the applied offset, or from the start) were applied.
    mutating func markApplied(_ count: Int, fromStart: Bool = false) {
        appliedOffset = (fromStart ? 0 : appliedOffset) + count
    }

    /// Appends frames at the end of the journal; on failure truncates back to where it was and
    /// returns the `errno`. Assumes the journal lock is held and the index caught up.
    mutating func _append(_ bytes: [UInt8]) -> Int32 {
        guard !bytes.isEmpty else { return 0 }
        let error = bytes.withUnsafeBytes { Posix.writeAll(descriptor, $0) }
        if error != 0 {
            _ = Posix.truncate(descriptor, to: appliedOffset)
            return error
        }
        appliedOffset += bytes.count
        return 0
    }

    /// Flushes the journal to disk (at the last clean close, before its session file goes).
    func synchronize() {
        Posix.synchronize(descriptor)
    }

    /// Closes the descriptor.
    mutating func close() {
        Posix.closeFile(descriptor)
        descriptor = -1
    }
}
