import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Answers "no entry" for a key without the store's mutex, when that answer is certain: the
/// index's `KeyPresenceFilter` has not seen the key, and the journal on disk is the very file, at
/// the very size, that the index had applied when the store last published them.
///
/// `CacheStore` publishes after every operation, with its mutex held, and withdraws the
/// publication while the cache is opening (the index is not built yet) or in trouble. What the
/// check relies on:
/// - This instance adds to its index and to the filter in the same locked step, so a key stored
///   here is never "absent".
/// - Another instance, in this process or another one, can only add a key by appending to the
///   journal or replacing it (a compaction, a recreated directory): either changes the size or the
///   file at the path, and the lookup then takes the mutex and catches up, as before.
/// - A publication older than the latest operation is still safe: the journal it names has not
///   changed since, and every key added meanwhile is in the filter already.
final class MissShortcut: Sendable {
    /// What the index covered when it was published.
    struct Publication: Sendable {
        let filter: KeyPresenceFilter
        let device: UInt64
        let inode: UInt64
        /// The journal's applied size: every record before it is in the index.
        let journalSize: Int
    }

    private let publication = Lock<Publication?>(nil)

    /// Replaces the publication (nil withdraws it). Called with the store's mutex held.
    func publish(_ new: Publication?) {
        publication.withLock { $0 = new }
    }

    /// Whether the cache certainly holds no entry for `key`: false means "look it up".
    func isSurelyAbsent(_ key: String, journalPath: String) -> Bool {
        guard let published = publication.withLock({ $0 }) else { return false }
        guard !published.filter.mayContain(hash: KeyPresenceFilter.hash(key)) else { return false }
        guard let info = Posix.status(journalPath) else { return false }
        return UInt64(truncatingIfNeeded: info.st_dev) == published.device
            && UInt64(truncatingIfNeeded: info.st_ino) == published.inode
            && Int(info.st_size) == published.journalSize
    }
}
