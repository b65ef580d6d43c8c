#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where everything of one cache lives on disk.
///
/// ```
/// root/
///   journal         the index: an append-only log of records, replaced atomically when compacted
///   journal.lookup  where each key's records are in the journal: a hint for the first lookups
///                   after an opening (`JournalLookupTable`), written at compaction and closing
///   lock            flock target: journal appends, compaction and promotions into ready/ hold it
///   session.lock    what earlier versions held shared while open (probed for their files only)
///   sessions/       one file per open instance, naming its process, deleted when it closes
///                   cleanly: a file whose process is gone means an instance crashed and index
///                   and files must be reconciled (`SessionFiles`)
///   loading/        in-progress writes, <pid>-<unique random>.part
///   ready/          complete entries only: <digest>-<version> (single layout)
///   ready/00 … ff/  complete entries spread over 256 buckets (bucketed layout)
///   ready.trash-*   what removeAll moved aside and is deleting
/// ```
struct CacheLayout: Sendable {
    /// How entry files are arranged under `ready/`.
    enum Kind: UInt8, Sendable {
        /// All entries directly in `ready/` (`FileCache`).
        case single = 1
        /// Entries in 256 bucket directories `ready/00` … `ready/ff` (`BigFileCache`).
        case bucketed = 2
    }

    let kind: Kind
    let root: String
    let ready: String
    let loading: String
    /// `loading/` and the start of a temporary file's name (`FileNames.temporaryNamePrefix`), in UTF-8.
    private let temporaryPrefix: [UInt8]
    let journal: String
    let journalLock: String
    let sessionLock: String
    let sessions: String
    /// Bucket directory paths (one, `ready` itself, for the single layout).
    let bucketDirectories: [String]
    /// The Data Protection class of the files the cache creates (Apple platforms).
    let protection: FileProtection

    init(root: String, kind: Kind, protection: FileProtection = .completeUntilFirstUserAuthentication) {
        self.protection = protection
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.kind = kind
        self.root = root
        let ready = root + "/ready"
        self.ready = ready
        loading = root + "/loading"
        temporaryPrefix = Array((loading + "/" + FileNames.temporaryNamePrefix).utf8)
        journal = root + "/journal"
        journalLock = root + "/lock"
        sessionLock = root + "/session.lock"
        sessions = root + "/sessions"
        switch kind {
        case .single: bucketDirectories = [ready]
        case .bucketed: bucketDirectories = (0..<256).map { ready + "/" + FileNames.bucketName($0) }
        }
    }

    /// 1 or 256.
    var bucketCount: Int { bucketDirectories.count }

    /// The bucket an entry's file lives in.
    func bucket(of id: FileID) -> Int { id.bucket(of: bucketCount) }

    /// The full path of an entry's file.
    func path(for id: FileID) -> String {
        // One new string, written in place: `directory + "/" + id.fileName` made three (each
        // write and each first read of an entry builds its path).
        var directory = bucketDirectories[bucket(of: id)]
        return directory.withUTF8 { prefix in
            let length = prefix.count + 1 + FileID.nameLength
            return String(unsafeUninitializedCapacity: length) { buffer in
                _ = buffer.initialize(fromContentsOf: prefix)
                buffer[prefix.count] = UInt8(ascii: "/")
                id.writeName(into: buffer, at: prefix.count + 1)
                return length
            }
        }
    }

    /// Renames a finished write from `loading/` to its place in `ready/`, creating `ready/` and
    /// the bucket directory when missing (they are created on first use, and again after
    /// `removeAll`). Returns 0, or the `errno` of the failure.
    /// `destination` is `path(for: id)`, which the caller already has.
    func promote(_ temporaryPath: String, to destination: String, id: FileID) -> Int32 {
        var error = Posix.renameItem(temporaryPath, destination)
        if error == ENOENT, Posix.makeDirectory(ready) == 0, Posix.makeDirectory(bucketDirectories[bucket(of: id)]) == 0 {
            error = Posix.renameItem(temporaryPath, destination)
        }
        return error
    }

    /// A new path in `loading/` for an in-progress write: `temporaryPrefix`, 16 hex digits of
    /// `FileNames.uniqueRandom()`, `.part`. Written into one new string: no interpolation, no
    /// concatenation (this runs once per write).
    func newTemporaryPath() -> String {
        let prefix = temporaryPrefix
        let length = prefix.count + FileNames.temporaryNameTailLength
        return String(unsafeUninitializedCapacity: length) { buffer in
            _ = buffer.initialize(fromContentsOf: prefix)
            FileNames.writeHex(FileNames.uniqueRandom(), into: buffer, at: prefix.count)
            var position = prefix.count + 16
            for byte in ".part".utf8 {
                buffer[position] = byte
                position += 1
            }
            return length
        }
    }

    /// Creates the root, `loading/`, `ready/` and `sessions/` (bucket directories are created when first
    /// needed). Returns 0 or the `errno` of the failing step (`ENOTDIR` when the root is a file).
    func makeDirectories() -> Int32 {
        let rootResult = Posix.makeDirectories(root)
        if rootResult != 0 { return rootResult }
        let loadingResult = Posix.makeDirectory(loading)
        if loadingResult != 0 { return loadingResult }
        let readyResult = Posix.makeDirectory(ready)
        if readyResult != 0 { return readyResult }
        let sessionsResult = Posix.makeDirectory(sessions)
        if sessionsResult != 0 { return sessionsResult }
        // Where the cache creates files (the journal and lock files, writes, session files); what
        // it moves elsewhere keeps the class it was created with.
        PrivateFiles.applyProtection(protection, toDirectories: [root, loading, sessions])
        PrivateFiles.narrowOwnItems(
            [loading, ready, sessions, root + "/partial", journal, journalLock, sessionLock, root + "/journal.lookup"])
        if kind == .bucketed { PrivateFiles.narrowOwnItems(bucketDirectories) }
        return Posix.requireDirectory(ready)
    }
}
