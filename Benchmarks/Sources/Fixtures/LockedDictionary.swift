import Synchronization

/// The baseline of the memory-cache rows: a plain `Dictionary` behind a `Mutex`, in a class like
/// `MemoryCache`, with nothing else (no recency, no limits).
final class LockedDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let storage: Mutex<[Key: Value]>

    /// Creates the dictionary holding `contents`.
    init(_ contents: [Key: Value]) {
        storage = Mutex(contents)
    }

    /// The value for `key`, or `nil`.
    func value(forKey key: Key) -> Value? {
        storage.withLock { $0[key] }
    }
}
