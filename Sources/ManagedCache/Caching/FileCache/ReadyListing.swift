import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of `ready/`, each with its size: what a reconciliation compares with the index
/// (`StoreState._reconcile()`, `StoreState._reconcileAfterCrash(listing:)`).
///
/// Listing every bucket and `stat`ing every file is the slow part of a reconciliation: about
/// 1.4 s for a million files on tmpfs, where replaying their journal takes 0.6 s. An opening
/// after a crash therefore lists `ready/` while its journal is replayed, on two threads that
/// share the buckets (`InProgress`), and before it takes the cache's lock (`isEarly`), so hits
/// served meanwhile do not wait for it. What changes between the listing and the lock is only
/// what other instances commit or evict (this instance writes nothing before its index is
/// installed), and the reconciliation, which runs with the journal locked and after catching up
/// with their records, allows for both: a file they evicted is deleted as a stray (its removal
/// is journaled, and deleting it again is harmless), and a file they committed after the
/// listing is looked up again before its record is dropped.
struct ReadyListing {
    /// One name in a bucket directory.
    struct File {
        /// The entry file it names, if it is one.
        let id: FileID?
        /// The name, when it names no entry file (an entry file's name is its `id`'s, made
        /// only when needed: a million `String`s were a fifth of the listing's time).
        private let otherName: String?
        /// Its size, for a regular file; `nil` for anything else.
        let size: Int?

        init(name: UnsafePointer<CChar>, size: Int?) {
            id = FileID(fileName: name)
            otherName = id == nil ? String(cString: name) : nil
            self.size = size
        }

        /// The name in its bucket directory.
        var name: String { otherName ?? id?.fileName ?? "" }
    }

    /// The names in each bucket directory (`CacheLayout.bucketDirectories`).
    var buckets: [[File]]
    /// The names in `ready/` that are no bucket directory (bucketed layout only).
    var foreignNames: [String]
    /// Whether it was taken before the journal was locked (see above).
    var isEarly: Bool

    /// Lists `ready/` of `layout` on the calling thread.
    ///
    /// - Parameters:
    ///   - layout: The cache's directories.
    ///   - early: Whether the caller does not hold the journal lock (see above).
    static func take(_ layout: CacheLayout, early: Bool) -> ReadyListing {
        ReadyListing(
            buckets: layout.bucketDirectories.map(listBucket), foreignNames: foreignNames(in: layout), isEarly: early)
    }

    /// The files of one bucket directory (none when it cannot be listed: buckets are created
    /// when first used).
    private static func listBucket(_ directory: String) -> [File] {
        var files: [File] = []
        _ = Posix.forEachName(in: directory) { name, directoryFD, _ in
            var info = stat()
            let isFile = fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            files.append(File(name: name, size: isFile ? Int(info.st_size) : nil))
        }
        return files
    }

    /// The names in `ready/` that are no bucket directory.
    private static func foreignNames(in layout: CacheLayout) -> [String] {
        var names: [String] = []
        if layout.kind == .bucketed {
            _ = Posix.forEachName(in: layout.ready) { name, _, _ in
                if FileNames.bucket(named: name) == nil { names.append(String(cString: name)) }
            }
        }
        return names
    }

    /// An early listing that any number of threads take together, a bucket at a time: the
    /// opening's threads help while they have nothing else to do, and the one that needs the
    /// listing helps, then waits for the buckets others are still listing (`finish()`).
    final class InProgress: Sendable {
        private struct Progress {
            var nextBucket = 0
            var listedBuckets = 0
            var buckets: [[File]]
        }

        private let layout: CacheLayout
        private let progress: WaitableLock<Progress>

        /// A listing of `layout`'s `ready/`, not started.
        init(_ layout: CacheLayout) {
            self.layout = layout
            progress = WaitableLock(Progress(buckets: Array(repeating: [], count: layout.bucketCount)))
        }

        /// Lists buckets until every bucket is listed or being listed.
        func help() {
            let count = layout.bucketCount
            while let bucket = progress.withLock({ progress -> Int? in
                guard progress.nextBucket < count else { return nil }
                defer { progress.nextBucket += 1 }
                return progress.nextBucket
            }) {
                let files = ReadyListing.listBucket(layout.bucketDirectories[bucket])
                progress.withLock { progress in
                    progress.buckets[bucket] = files
                    progress.listedBuckets += 1
                }
            }
        }

        /// Helps, waits until every bucket is listed, and returns the listing (call it once).
        func finish() -> ReadyListing {
            help()
            let count = layout.bucketCount
            let buckets = progress.withLock(
                waitingUntil: { $0.listedBuckets == count },
                then: { progress in
                    // Moved out, not copied: the listing is finished and nobody reads it here again.
                    defer { progress.buckets = [] }
                    return progress.buckets
                })
            return ReadyListing(buckets: buckets, foreignNames: ReadyListing.foreignNames(in: layout), isEarly: true)
        }
    }
}
