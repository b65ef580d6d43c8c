import Foundation

/// A file cache in one directory, with least-recently-used eviction and limits by bytes, count
/// and age enforced on every commit. The default file cache for up to some tens of thousands of
/// entries; for 100,000 and more, use ``BigFileCache``.
///
/// ```swift
/// // Assumes `cachesDirectory` (the app's caches directory, a URL).
/// let cache = try FileCache(
///     directory: cachesDirectory.appendingPathComponent("images"),
///     configuration: .init(byteLimit: 200 << 20, countLimit: 5_000, maximumAge: 7 * 86_400))
/// ```
///
/// What it guarantees:
/// - **Nothing partial is ever visible.** Downloads stream into `root/loading/`; `commit` renames
///   the finished file into `root/ready/` (one atomic `rename(2)`) and records it in the index.
///   An aborted, failed or abandoned writer, or a crash, leaves nothing in `ready/`, and the
///   `loading/` leftovers of dead processes are deleted at the next open.
/// - **Always within limits.** After every commit the cache holds at most `countLimit` unpinned
///   entries and `byteLimit` bytes of them, plus at most the object just written (which is kept even when it alone
///   exceeds the byte limit, so its reader can still use it), and no expired entry.
/// - **Pinned entries stay.** An entry stored with `pinned: true` or pinned later
///   (``JournaledFileCache/pin(forKey:)``) is never evicted, trimmed or expired; it counts against the pinned quota
///   (`pinnedByteLimit`), on top of the limits, until ``JournaledFileCache/unpin(forKey:)``, a removal or `removeAll`.
/// - **LRU.** A hit makes an entry the most recently used. Recency is kept in memory and written
///   to the index in batches (every 256 hits, with the next commit, at `trim`, `flush` and when
///   the cache is closed or released), never one disk write per hit.
/// - **Integrity.** Each entry's size and checksum (XXH64; CRC-32 for entries written by
///   versions before it) are recorded at commit; `readData(for:)` and
///   `verify(_:)` detect a changed, truncated or missing file, remove the entry and throw
///   `FileCacheError.corrupted`.
/// - **Any key is safe.** File names are a SHA-256 of the key plus a version, never the key; the
///   full key is kept in the index and compared byte for byte, so distinct keys never share data.
/// - **Crash safe.** The index is an append-only journal with a checksum per record. After a
///   crash the next open reconciles index and files (see `BigFileCache` for the costs).
/// - **Shared safely.** Several instances, in one process or several (an app and its extension),
///   can use one directory: promotions and index writes are serialised by a `flock` taken inside
///   each operation (never held between two; waited for at most a second, then
///   `FileCacheError.busy`), and an entry another instance committed is found on the next lookup miss.
/// - **Disk failures are survivable.** When the directory is removed, replaced by a file,
///   read-only or full, operations throw `FileCacheError.io` and lookups return nil; the cache
///   recreates its directories and carries on once the disk is usable again.
///
/// Every method may be called from any thread.
// @unchecked: restated from `JournaledFileCache` (see there); this class adds no stored property.
public final class FileCache: JournaledFileCache, @unchecked Sendable {
    /// Opens the cache in `directory`, creating it (and missing parents) if needed. The index is
    /// built from the journal on a thread of its own: hits are served from the start, and the
    /// limits are enforced before the first write, miss or trim (see `BigFileCache`'s costs).
    /// Throws `FileCacheError.io` when the directory cannot be created or holds a `BigFileCache`.
    ///
    /// - Parameters:
    ///   - directory: The cache's root, used by this cache type only. Several instances, in this
    ///     process or another, may share it.
    ///   - configuration: The limits. Default: unlimited.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the directory cannot be created,
    ///   its index cannot be opened, or it holds a ``BigFileCache``.
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws {
        try self.init(directory: directory, configuration: configuration, clock: { Date() })
    }

    /// Entries directly in `ready/`.
    override class var layoutKind: CacheLayout.Kind { .single }
}
