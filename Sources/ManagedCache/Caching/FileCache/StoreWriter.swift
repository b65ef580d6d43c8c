import Foundation
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A write in progress into one of the caches: a file of its own in `loading/`, a running
/// XXH64 checksum and byte count. Nothing is visible until `commit` renames the file into `ready/`.
///
/// Writes go straight to the file (no buffering in memory: a 200 MB download costs no memory)
/// and are not `fsync`ed: a process crash loses nothing the kernel has, and after a power loss
/// the checksum recorded at commit catches whatever did not reach the disk.
final class StoreWriter: FileCacheWriter {
    private struct Progress {
        var descriptor: Int32
        var checksum = XXH64()
        var size = 0
        var closed = false
    }

    private let store: CacheStore
    private let key: String
    private let id: FileID
    private let temporaryPath: String
    /// Whether the entry is committed pinned (in its `add` record: see `StoreState._finishPromotion`).
    private let pinned: Bool
    private let progress: Lock<Progress>

    /// `initialSize` and `initialChecksum` describe bytes already in the file (a resumed download).
    init(
        store: CacheStore, key: String, id: FileID, temporaryPath: String, descriptor: Int32,
        initialSize: Int = 0, initialChecksum: XXH64 = XXH64(), pinned: Bool = false
    ) {
        self.store = store
        self.key = key
        self.id = id
        self.temporaryPath = temporaryPath
        self.pinned = pinned
        progress = Lock(Progress(descriptor: descriptor, checksum: initialChecksum, size: initialSize))
        LoadAccounting.writers.withLock { $0 += 1 }
    }

    deinit {
        // An abandoned writer leaves nothing behind.
        abort()
        LoadAccounting.writers.withLock { $0 -= 1 }
    }

    func write(_ chunk: Data) throws {
        try writeChunk(chunk)
    }

    /// `write(_:)` with its typed error.
    func writeChunk(_ chunk: Data) throws(FileCacheError) {
        try progress.withLock { progress throws(FileCacheError) in
            guard !progress.closed, progress.descriptor >= 0 else { throw .writerClosed }
            var error: Int32 = 0
            for region in chunk.regions where error == 0 {
                region.withUnsafeBytes { bytes in
                    error = Posix.writeAll(progress.descriptor, bytes)
                    if error == 0 { progress.checksum.update(bytes) }
                }
            }
            guard error == 0 else {
                Self.close(&progress, unlinking: temporaryPath)
                store.noteDiskTrouble()
                throw .io(operation: "write to loading/", errno: error)
            }
            progress.size += chunk.count
        }
    }

    @discardableResult
    func commit(metadata: FileCacheMetadata) throws -> FileCacheEntry {
        try commitWriting(metadata: metadata)
    }

    /// `commit(metadata:)` with its typed error.
    func commitWriting(metadata: FileCacheMetadata) throws(FileCacheError) -> FileCacheEntry {
        try progress.withLock { progress throws(FileCacheError) in
            guard !progress.closed, progress.descriptor >= 0 else { throw .writerClosed }
            Posix.closeFile(progress.descriptor)
            progress.descriptor = -1
            progress.closed = true
            let record = EntryRecord(
                key: key, id: id, size: progress.size, checksum: .xxh64(progress.checksum.value),
                created: 0, session: 0, metadata: metadata, pinned: pinned)
            do throws(FileCacheError) {
                return try store.commit(temporaryPath: temporaryPath, record: record)
            } catch {
                Posix.unlinkItem(temporaryPath)
                throw error
            }
        }
    }

    func abort() {
        progress.withLock { Self.close(&$0, unlinking: temporaryPath) }
    }

    /// Closes the descriptor at once and keeps the file for `suspend` or `abort`, which decide
    /// later (a cancelled download: its descriptor must not outlive the cancellation). Writing
    /// or committing afterwards throws `.writerClosed`.
    func releaseDescriptor() {
        progress.withLock { progress in
            guard !progress.closed, progress.descriptor >= 0 else { return }
            Posix.closeFile(progress.descriptor)
            progress.descriptor = -1
        }
    }

    /// Keeps what was written as a resumable partial download (see `CacheStore+Partial`).
    func suspend(validator: String) {
        let keep = progress.withLock { progress -> Bool in
            guard !progress.closed else { return false }
            if progress.descriptor >= 0 { Posix.closeFile(progress.descriptor) }
            progress.descriptor = -1
            progress.closed = true
            return progress.size > 0
        }
        if keep {
            store.keepPartial(temporaryPath: temporaryPath, key: key, validator: validator)
        } else {
            _ = Posix.unlinkItem(temporaryPath)
        }
    }

    private static func close(_ progress: inout Progress, unlinking path: String) {
        guard !progress.closed else { return }
        if progress.descriptor >= 0 { Posix.closeFile(progress.descriptor) }
        progress.descriptor = -1
        progress.closed = true
        Posix.unlinkItem(path)
    }
}
