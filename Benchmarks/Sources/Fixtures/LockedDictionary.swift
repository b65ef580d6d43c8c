import ManagedCacheLocking

#if canImport(Glibc)
import Synchronization

/// The baselines' lock: `Synchronization.Mutex`, as the targets in BENCHMARKS.md name it ("a raw
/// `Dictionary` + `Mutex`"), on Linux where the benchmarks run; the package's `Lock` elsewhere.
typealias BaselineLock<Value> = Mutex<Value>
#else
typealias BaselineLock<Value> = Lock<Value>
#endif

/// The baseline of the memory-cache rows: a plain `Dictionary` behind a `Mutex`, in a class like
/// `MemoryCache`, with nothing else (no recency, no limits).
final class LockedDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let storage: BaselineLock<[Key: Value]>

    /// Creates the dictionary holding `contents`.
    init(_ contents: [Key: Value]) {
        storage = BaselineLock(contents)
    }

    /// The value for `key`, or `nil`.
    func value(forKey key: Key) -> Value? {
        storage.withLock { $0[key] }
    }
}

extension LockedDictionary {
    /// Stores `value` under `key` and removes `evicting` (the baseline of inserts with eviction:
    /// a bounded dictionary that is told which key goes, so it does no bookkeeping of its own).
    func insert(_ value: Value, forKey key: Key, evicting: Key?) {
        let removed = storage.withLock { dictionary in
            dictionary[key] = value
            return evicting.flatMap { dictionary.removeValue(forKey: $0) }
        }
        _ = removed
    }
}
