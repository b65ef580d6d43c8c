import Foundation

/// Remembers keys that failed permanently, so bogus URLs are not requested again and again
/// (SDWebImage's promise). Entries expire after the policy's interval or when forgotten.
struct FailureMemory {
    private var failures: [String: (error: ManagedCacheError, until: ContinuousClock.Instant)] = [:]

    /// The remembered failure for `key`, if it has not expired.
    mutating func failure(for key: String, now: ContinuousClock.Instant = .now) -> ManagedCacheError? {
        guard let record = failures[key] else { return nil }
        guard record.until > now else {
            failures.removeValue(forKey: key)
            return nil
        }
        return record.error
    }

    /// Records `error` for `key` if it is permanent and the interval is positive.
    mutating func record(_ error: ManagedCacheError, for key: String, interval: Double) {
        guard error.isPermanent, interval > 0 else { return }
        if failures.count > 10_000 { prune() }
        failures[key] = (error, .now + .seconds(interval))
    }

    mutating func forget(_ key: String) { failures.removeValue(forKey: key) }

    mutating func forgetAll() { failures.removeAll() }

    private mutating func prune() {
        let now = ContinuousClock.now
        failures = failures.filter { $0.value.until > now }
    }
}
