import Foundation

/// Remembers keys that failed permanently, so bogus URLs are not requested again and again
/// (SDWebImage's promise). Entries expire after the policy's interval or when forgotten.
///
/// Transport and HTTP failures are remembered per data key (every decoder of the bytes is
/// affected); decoding failures per object key (another decoder may still succeed with the same
/// bytes). Forgetting a data key forgets both kinds.
struct FailureMemory {
    private typealias Record = (error: ManagedCacheError, until: ContinuousClock.Instant)

    private var byDataKey: [String: Record] = [:]
    private var byObjectKey: [ObjectKey: Record] = [:]

    /// The remembered failure of `key`'s bytes or of `key` itself, if it has not expired.
    mutating func failure(for key: ObjectKey, now: ContinuousClock.Instant = .now) -> ManagedCacheError? {
        if let error = failure(forDataKey: key.dataKey, now: now) { return error }
        guard let record = byObjectKey[key] else { return nil }
        guard record.until > now else {
            byObjectKey.removeValue(forKey: key)
            return nil
        }
        return record.error
    }

    /// The remembered failure of the bytes of `dataKey`, if it has not expired.
    mutating func failure(forDataKey dataKey: String, now: ContinuousClock.Instant = .now) -> ManagedCacheError? {
        guard let record = byDataKey[dataKey] else { return nil }
        guard record.until > now else {
            byDataKey.removeValue(forKey: dataKey)
            return nil
        }
        return record.error
    }

    /// Records a failure to load the bytes of `dataKey`, if it is permanent and the interval is positive.
    mutating func record(_ error: ManagedCacheError, forDataKey dataKey: String, interval: Double) {
        guard error.isPermanent, interval > 0 else { return }
        pruneIfLarge()
        byDataKey[dataKey] = (error, .now + .seconds(interval))
    }

    /// Records a failure to decode `key`, if it is permanent and the interval is positive.
    mutating func record(_ error: ManagedCacheError, for key: ObjectKey, interval: Double) {
        guard error.isPermanent, interval > 0 else { return }
        pruneIfLarge()
        byObjectKey[key] = (error, .now + .seconds(interval))
    }

    /// Forgets the failures of `dataKey`'s bytes and of every object decoded from them.
    mutating func forget(dataKey: String) {
        byDataKey.removeValue(forKey: dataKey)
        if byObjectKey.keys.contains(where: { $0.dataKey == dataKey }) {
            byObjectKey = byObjectKey.filter { $0.key.dataKey != dataKey }
        }
    }

    mutating func forgetAll() {
        byDataKey.removeAll()
        byObjectKey.removeAll()
    }

    private mutating func pruneIfLarge() {
        guard byDataKey.count + byObjectKey.count > 10_000 else { return }
        let now = ContinuousClock.now
        byDataKey = byDataKey.filter { $0.value.until > now }
        byObjectKey = byObjectKey.filter { $0.value.until > now }
    }
}
