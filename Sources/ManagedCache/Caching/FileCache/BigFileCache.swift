import Foundation

/// A file cache for 100,000 entries and more: entries spread over 256 bucket directories, and
/// limits enforced a tenth of the cache at a time, so no operation's cost grows with the cache.
///
/// Choose it over `FileCache` when the cache holds so many files that one directory, a global
/// eviction order or a trim over everything would cost too much. It keeps every guarantee of
/// `FileCache` (nothing partial visible, integrity, safe names, crash safety, sharing, surviving
/// disk failures); what differs is eviction:
///
/// - **A pass works on one tenth.** Each trim pass takes the next slice of about 26 buckets (the
///   slices rotate; the rotation belongs to the instance). It deletes the slice's expired entries
///   and, when the cache is over a limit, the slice's least recently used entries in proportion,
///   so that after a full rotation the cache would be at 90 % of its limit. A pass costs
///   in-memory work on its slice plus one unlink per file it deletes, whatever the cache's size.
/// - **Still always within limits.** A commit that puts the cache over a limit runs passes on
///   successive slices until it is within them again (at most one rotation). Such a pass deletes
///   what the limits need plus at most 64 entries of headroom, not its slice's whole share (a
///   tenth of the excess, ten thousand files in a cache of a million), so no commit waits for a
///   whole pass, and the commits after it find room and delete nothing. Expired entries are
///   deleted at every commit from an expiry queue (cost proportional to what expired), never
///   returned. `trim()`, `trimPass()` and an opening under lower limits run whole passes.
/// - **LRU within a slice.** Eviction order is least recently used among the slice's entries,
///   not over the whole cache.
/// - **Pinned entries stay.** Pinned entries (``JournaledFileCache/pin(forKey:)``, `store(_:forKey:metadata:pinned:)`)
///   are in no slice's eviction order and never expire: passes skip them at no cost. They count
///   against the pinned quota (`pinnedByteLimit`), not the limits.
///
/// Costs: opening maps the index journal and lists only the small `sessions/` and `loading/`
/// directories: no bucket listing, no stat per entry. The journal is replayed into the index (one
/// checksum per record) on a thread of its own; a hit that comes first is found through the
/// journal's lookup table (`journal.lookup`, where each key's records are) or by scanning the
/// journal, and so is a miss when the journal is certain of it (the table lists every key it
/// covers, and what follows it is short); writes and trims wait for the index. After a crash (a session file left
/// behind: on iOS, a launch after the app was killed in the background) the same thread also
/// lists the bucket directories and stats their files, then reconciles them with the index under
/// the cache's lock; hits come from the journal meanwhile. Only a missing or damaged journal
/// header makes the open replay at once. Measured on 100,000 entries: the first hit in about 0.35 ms, 1/190 of the time
/// to build the whole index, which takes about 2× listing one directory of 100,000 names with
/// `FileManager`; after a crash also about 0.35 ms, where the whole opening takes about 475 ms
/// (BENCHMARKS.md).
///
/// `removeAll` leaves a working cache (it moves `ready/` aside in one rename, recreates it and
/// deletes the old tree); bucket directories are created as they are needed.
// @unchecked: restated from `JournaledFileCache` (see there); this class adds no stored property.
public final class BigFileCache: JournaledFileCache, @unchecked Sendable {
    /// What one trim pass did (for the tests and benchmarks).
    package struct TrimPassReport: Sendable, Hashable {
        /// Which tenth of the buckets the pass worked on (0 to 9).
        package var slice: Int
        /// How many bucket directories the slice covers (25 or 26 of 256).
        package var bucketsVisited: Int
        /// Entries in the slice when the pass started.
        package var entriesInSlice: Int
        /// Entries the pass looked at (the slice's entries when some can expire, plus eviction candidates).
        package var entriesExamined: Int
        /// Entries the pass deleted.
        package var entriesRemoved: Int
        /// Bytes the pass deleted.
        package var bytesRemoved: Int

        /// Creates a report.
        ///
        /// - Parameters:
        ///   - slice: Which tenth of the buckets the pass worked on.
        ///   - bucketsVisited: How many bucket directories the slice covers.
        ///   - entriesInSlice: Entries in the slice when the pass started.
        ///   - entriesExamined: Entries the pass looked at.
        ///   - entriesRemoved: Entries the pass deleted.
        ///   - bytesRemoved: Bytes the pass deleted.
        package init(
            slice: Int, bucketsVisited: Int, entriesInSlice: Int, entriesExamined: Int,
            entriesRemoved: Int, bytesRemoved: Int
        ) {
            self.slice = slice
            self.bucketsVisited = bucketsVisited
            self.entriesInSlice = entriesInSlice
            self.entriesExamined = entriesExamined
            self.entriesRemoved = entriesRemoved
            self.bytesRemoved = bytesRemoved
        }
    }

    /// The number of bucket directories under `ready/`.
    package static let bucketCount = 256
    /// The number of passes in which every bucket is visited once.
    package static let passesPerRotation = 10

    /// Opens the cache in `directory`, creating it (and missing parents) if needed. Throws
    /// `FileCacheError.io` when the directory cannot be created or holds a `FileCache`.
    ///
    /// - Parameters:
    ///   - directory: The cache's root, used by this cache type only. Several instances, in this
    ///     process or another, may share it.
    ///   - configuration: The limits. Default: unlimited.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` when the directory cannot be created,
    ///   its index cannot be opened, or it holds a ``FileCache``.
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws {
        try self.init(directory: directory, configuration: configuration, clock: { Date() })
    }

    /// Entries in 256 bucket directories.
    override class var layoutKind: CacheLayout.Kind { .bucketed }

    /// Runs exactly one pass on the next tenth of the buckets and reports what it did; nil when
    /// the disk is unusable (for the tests and benchmarks).
    ///
    /// - Returns: What the pass examined and deleted, or `nil` when the disk is unusable.
    @discardableResult
    package func trimPass() -> TrimPassReport? {
        store.trimPass()
    }
}
