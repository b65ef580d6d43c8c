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
///   file at the path, and the lookup then takes the mutex and catches up, as before. (The store
///   keeps its journal open, so while a publication names it, no new file gets its inode number.)
/// - A publication older than the latest operation is still safe: the journal it names has not
///   changed since, and every key added meanwhile is in the filter already.
/// - During this instance's own append, the bytes past the applied size are its own (it holds the
///   journal lock): a key they add is being committed, and answering "absent" for it orders the
///   lookup before that commit, which has not returned yet.
final class MissShortcut: Sendable {
    /// What the index covered when it was published.
    struct Publication: Sendable {
        let filter: KeyPresenceFilter
        let device: UInt64
        let inode: UInt64
        /// The sizes the journal may have: its applied size (every record before it is in the
        /// index) and, while this instance appends with the journal lock held (no other instance
        /// can append then), the size after that append.
        let journalSizes: ClosedRange<Int>
    }

    private let publication = Lock<Publication?>(nil)

    /// Replaces the publication (nil withdraws it). Called with the store's mutex held: at the end
    /// of every operation, and around the journal's appends and replacements, so that a writer
    /// preempted in the middle of one does not send lookups to the mutex it holds.
    func publish(_ new: Publication?) {
        publication.withLock { $0 = new }
    }

    /// Whether this instance's index certainly holds no entry for `key`: the filter alone, no
    /// system call. Another instance may have stored one since this one last caught up; a caller
    /// that must not miss that asks `isSurelyAbsent(_:journalPath:)`.
    func isAbsentFromIndex(_ key: String) -> Bool {
        publicationIfAbsent(key) != nil
    }

    /// Whether the cache certainly holds no entry for `key`: false means "look it up".
    func isSurelyAbsent(_ key: String, journalPath: String) -> Bool {
        guard let published = publicationIfAbsent(key), let info = Posix.status(journalPath) else { return false }
        return UInt64(truncatingIfNeeded: info.st_dev) == published.device
            && UInt64(truncatingIfNeeded: info.st_ino) == published.inode
            && published.journalSizes.contains(Int(info.st_size))
    }

    /// The publication, when there is one and its filter has not seen `key`.
    private func publicationIfAbsent(_ key: String) -> Publication? {
        guard let published = publication.withLock({ $0 }),
            !published.filter.mayContain(hash: KeyPresenceFilter.hash(key))
        else { return nil }
        return published
    }
}
