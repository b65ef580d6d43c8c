#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of `ready/`, each with its size: what a reconciliation compares with the index
/// (`StoreState._reconcile()`, `StoreState._reconcileAfterCrash(listing:)`).
///
/// Listing every bucket and `stat`ing every file is a slow part of a reconciliation. An opening
/// after a crash takes the listing on its background thread before it takes the cache's lock
/// (`isEarly`), so hits served meanwhile do not wait for it. What changes between the listing and
/// the lock is only what other instances commit or evict (this instance writes nothing before its
/// index is installed), and the reconciliation, which runs with the journal locked and after
/// catching up with their records, allows for both: a file they evicted is deleted as a stray
/// (its removal is journaled, and deleting it again is harmless), and a file they committed after
/// the listing is looked up again before its record is dropped.
struct ReadyListing {
    /// One name in a bucket directory.
    struct File {
        let name: String
        /// The entry file it names, if it is one.
        let id: FileID?
        /// Its size, for a regular file; `nil` for anything else.
        let size: Int?
    }

    /// The names in each bucket directory (`CacheLayout.bucketDirectories`).
    var buckets: [[File]]
    /// The names in `ready/` that are no bucket directory (bucketed layout only).
    var foreignNames: [String]
    /// Whether it was taken before the journal was locked (see above).
    var isEarly: Bool

    /// Lists `ready/` of `layout`.
    ///
    /// - Parameters:
    ///   - layout: The cache's directories.
    ///   - early: Whether the caller does not hold the journal lock (see above).
    static func take(_ layout: CacheLayout, early: Bool) -> ReadyListing {
        var buckets: [[File]] = []
        buckets.reserveCapacity(layout.bucketCount)
        for directory in layout.bucketDirectories {
            var files: [File] = []
            _ = Posix.forEachName(in: directory) { name, directoryFD, _ in
                var info = stat()
                let isFile = fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFREG
                let fileName = String(cString: name)
                files.append(File(name: fileName, id: FileID(fileName: name), size: isFile ? Int(info.st_size) : nil))
            }
            buckets.append(files)
        }
        var foreignNames: [String] = []
        if layout.kind == .bucketed {
            _ = Posix.forEachName(in: layout.ready) { name, _, _ in
                if FileNames.bucket(named: name) == nil { foreignNames.append(String(cString: name)) }
            }
        }
        return ReadyListing(buckets: buckets, foreignNames: foreignNames, isEarly: early)
    }
}
