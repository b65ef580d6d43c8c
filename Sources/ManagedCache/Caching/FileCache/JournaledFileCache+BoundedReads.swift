import Foundation

/// What `manage` asks of a ``FileCache`` or a ``BigFileCache`` on the caller's thread: the index's
/// presence filter, and lookups and reads that wait a bounded time for the store's mutex, which
/// writers hold across journal appends.
extension JournaledFileCache {
    /// Whether the index has no entry for `key`: its presence filter, no system call and no lock
    /// (see `MissShortcut`). An entry another instance stored since this one last caught up is
    /// not seen here.
    ///
    /// - Parameter key: The data key.
    /// - Returns: `true` when this instance's index surely has no entry for `key`.
    public final func indexLacksEntry(forKey key: String) -> Bool {
        store.missShortcut.isAbsentFromIndex(key)
    }

    /// ``entry(forKey:)``, waiting at most `seconds` for the store's mutex. During an opening the
    /// wait is not bounded: the early lookup waits as it would without one.
    ///
    /// - Parameters:
    ///   - key: The data key.
    ///   - seconds: The longest wait for the mutex.
    /// - Returns: The entry or `nil`, or `.busy`.
    public final func entry(forKey key: String, waitingAtMost seconds: Double) -> BoundedFileCacheAnswer<FileCacheEntry?> {
        switch store.entry(forKey: key, waitingAtMost: seconds) {
        case .answered(let found): .answered(found?.entry)
        case .busy: .busy
        }
    }

    /// ``readData(for:)``, waiting at most `seconds` each time the read needs the store's mutex;
    /// a verification made past such a wait is not remembered.
    ///
    /// - Parameters:
    ///   - entry: An entry ``entry(forKey:)`` returned.
    ///   - seconds: The longest wait for the mutex.
    /// - Returns: The bytes, or `.busy`.
    /// - Throws: ``FileCacheError/corrupted(key:)`` or ``FileCacheError/io(operation:errno:)``.
    public final func readData(for entry: FileCacheEntry, waitingAtMost seconds: Double) throws -> BoundedFileCacheAnswer<Data> {
        guard let bytes = try store.readData(for: entry, waitingAtMost: seconds) else { return .busy }
        return .answered(bytes)
    }
}
