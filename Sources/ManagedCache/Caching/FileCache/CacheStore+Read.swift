import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading entries and checking them against their checksums.
///
/// A read is one `open`, one `fstat`, one `read` into a buffer that becomes the `Data` without a
/// copy, and a checksum of the bytes (XXH64, or CRC-32 for entries written before it). The
/// checksum is the expensive part (XXH64 about 10 GB/s, CRC-32 about 4 GB/s, against about 6 GB/s
/// for reading from the page cache), so a verification is remembered: when the file's
/// stamp (device, inode, size, mtime, ctime) is the one it had when its checksum last matched,
/// the bytes are the same bytes and the checksum is skipped. Any write to the file changes its size,
/// mtime or ctime; user code cannot set a ctime back. A stamp is only remembered once its
/// timestamps are older than the file system's timestamp granularity (`stampSettleNanoseconds`),
/// because a change within the same clock tick would not show. The memo is journaled (a
/// `verified` record, written with the next batch of hits), so later instances and other
/// processes skip the checksum of a file verified before and unchanged since; a copied or restored
/// file has another inode and ctime and is checked again. So a file modified, truncated,
/// replaced or deleted behind the cache's back is always detected; what the memo does not catch
/// is bit rot on the medium below the file system after the file's first verification (storage
/// that loses bits silently, without an I/O error and without any write).
extension CacheStore {
    #if canImport(Darwin)
    /// HFS+ and FAT volumes keep one- or two-second timestamps.
    static let stampSettleNanoseconds: Int64 = 2_500_000_000
    #else
    /// Linux file timestamps come from the coarse clock (a tick of 1–10 ms).
    static let stampSettleNanoseconds: Int64 = 50_000_000
    #endif

    /// The bytes of `entry`, checked against its checksum.
    func readData(for entry: FileCacheEntry) throws(FileCacheError) -> Data {
        // Without a budget, `nil` (busy) never comes back.
        try readData(for: entry, waitingAtMost: nil) ?? Data()
    }

    /// `readData(for:)`, waiting at most `budget` seconds each time it needs the mutex, when given:
    /// `nil` when the mutex stayed held for that long before the read (a synchronous
    /// read inside `manage` then goes to the background), and no memo of the verification when it
    /// did after it.
    func readData(for entry: FileCacheEntry, waitingAtMost budget: Double?) throws(FileCacheError) -> Data? {
        guard let current = try currentRecord(of: entry, waitingAtMost: budget) else { return nil }
        return try read(current, waitingAtMost: budget)
    }

    /// `readData(for:waitingAtMost:)` right after the lookup that found `found`: its record, path
    /// and last verification, read under the lookup's lock, are used as they are. The entry may be
    /// replaced or removed meanwhile, as it may after any lookup; then the read finds the old
    /// version's file intact (its bytes are what the lookup found), or gone (`corrupted`, and only
    /// that version is removed).
    func readData(_ found: LookedUp, waitingAtMost budget: Double?) throws(FileCacheError) -> Data? {
        guard let current = found.current else { return try readData(for: found.entry, waitingAtMost: budget) }
        return try read(current, waitingAtMost: budget)
    }

    /// Reads and checks the file of `current`.
    private func read(
        _ current: CurrentRecord, waitingAtMost budget: Double?
    ) throws(FileCacheError) -> Data? {
        let (record, path, verifiedStamp) = current
        let (descriptor, info) = try openEntryFile(record, path: path)
        defer { Posix.closeFile(descriptor) }
        guard record.size > 0 else {
            guard record.checksum.matches(UnsafeRawBufferPointer(start: nil, count: 0)) else { throw discard(record) }
            return Data()
        }
        guard let buffer = malloc(record.size) else { throw .io(operation: "allocate read buffer", errno: ENOMEM) }
        let got = Posix.readFully(descriptor, into: buffer, count: record.size)
        guard got == record.size else {
            free(buffer)
            if got < 0 { throw .io(operation: "read entry file", errno: Int32(-got)) }
            throw discard(record)
        }
        let stamp = FileStamp(info)
        if stamp != verifiedStamp {
            guard record.checksum.matches(UnsafeRawBufferPointer(start: buffer, count: record.size)) else {
                free(buffer)
                throw discard(record)
            }
            rememberVerification(record, stamp: stamp, waitingAtMost: budget)
        }
        return Data(bytesNoCopy: buffer, count: record.size, deallocator: .free)
    }

    /// Opens the file of `record` at `path` for reading, with its status; the caller closes the
    /// descriptor. Throws as a read must: the file missing (see `missingFile`), not statable, or
    /// of another size than the record's (the entry is discarded).
    private func openEntryFile(_ record: EntryRecord, path: String) throws(FileCacheError) -> (descriptor: Int32, info: stat) {
        let descriptor = Posix.openForReading(path)
        guard descriptor >= 0 else { throw missingFile(record, path: path, errno: -descriptor) }
        guard let info = Posix.status(of: descriptor) else {
            let error = errno
            Posix.closeFile(descriptor)
            throw .io(operation: "stat entry file", errno: error)
        }
        guard Int(info.st_size) == record.size else {
            Posix.closeFile(descriptor)
            throw discard(record)
        }
        return (descriptor, info)
    }

    /// Checks `entry`'s own file against its checksum without keeping the bytes.
    func verify(_ entry: FileCacheEntry) throws(FileCacheError) {
        guard let (record, path, verifiedStamp) = try currentRecord(of: entry, waitingAtMost: nil) else { return }
        let (descriptor, info) = try openEntryFile(record, path: path)
        defer { Posix.closeFile(descriptor) }
        let stamp = FileStamp(info)
        if stamp == verifiedStamp { return }
        let chunk = min(max(record.size, 1), 1 << 20)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var checksum = EntryChecksum.Verifier(like: record.checksum)
        var total = 0
        while true {
            let got = Posix.readFully(descriptor, into: buffer, count: chunk)
            if got < 0 { throw .io(operation: "read entry file", errno: Int32(-got)) }
            if got == 0 { break }
            checksum.update(UnsafeRawBufferPointer(start: buffer, count: got))
            total += got
            if got < chunk { break }
        }
        guard total == record.size, checksum.value == record.checksum else { throw discard(record) }
        rememberVerification(record, stamp: stamp)
    }

    /// The index record `entry` describes, and the stamp of its last verification. Throws
    /// `corrupted` when the entry was removed or evicted since it was looked up (its file is
    /// gone), or replaced by a newer version (whose bytes and metadata belong together, so
    /// they are not handed out under the old entry; the newer version is left alone). Versions
    /// are told apart by commit time and size: `_commit` makes successive versions' commit
    /// times strictly increasing.
    ///
    /// With `budget`: nil when the mutex stayed held for that long.
    private func currentRecord(
        of entry: FileCacheEntry, waitingAtMost budget: Double?
    ) throws(FileCacheError) -> (EntryRecord, String, FileStamp?)? {
        let (found, busy) = peek(entry.key, waitingAtMost: budget)
        if busy { return nil }
        guard let (record, path, stamp) = found,
            record.created == entry.createdAt.timeIntervalSinceReferenceDate, record.size == entry.byteCount
        else {
            throw isClosed ? .closed : .corrupted(key: entry.key)
        }
        return (record, path, stamp)
    }

    /// Removes a corrupted entry and returns the error to throw.
    private func discard(_ record: EntryRecord) -> FileCacheError {
        _ = try? withState { state throws(FileCacheError) in
            try state._remove(key: record.key, version: record.id.version)
        }
        return .corrupted(key: record.key)
    }

    /// An entry's file could not be opened: the entry is corrupted when `ready/` is fine (a
    /// missing bucket directory is just a missing file: buckets are created lazily), a disk
    /// problem otherwise.
    private func missingFile(_ record: EntryRecord, path: String, errno error: Int32) -> FileCacheError {
        if error == ENOENT && Posix.requireDirectory(layout.ready) == 0 {
            return discard(record)
        }
        noteDiskTrouble()
        return .io(operation: "open entry file", errno: error)
    }

    /// Remembers the stamp of a file whose checksum matched, once its timestamps have settled.
    private func rememberVerification(_ record: EntryRecord, stamp: FileStamp, waitingAtMost budget: Double? = nil) {
        let now = Posix.wallClockNanoseconds()
        guard now - stamp.changed >= Self.stampSettleNanoseconds, now - stamp.modified >= Self.stampSettleNanoseconds else {
            return
        }
        noteVerified(record, stamp: stamp, waitingAtMost: budget)
    }
}
