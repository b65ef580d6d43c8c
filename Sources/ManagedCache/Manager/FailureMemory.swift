import Foundation
import ManagedCacheLocking

/// Remembers keys that failed permanently, so bogus URLs are not requested again and again
/// (SDWebImage's promise), with an exponential backoff: a key is refused for
/// `LoadPolicy.failureMemoryFirstInterval` after its first failure, twice as long after each
/// further failure in a row, at most `LoadPolicy.failureMemoryInterval`. A success, or
/// `ObjectManager.forgetFailure(for:)` (a user's explicit retry), starts it over.
///
/// Why a backoff rather than one fixed interval: a 404 from a flaky server or a captive portal
/// would otherwise blank an image for the whole interval (10 minutes), while a URL that really is
/// gone still ends up asked for rarely.
///
/// Transport and HTTP failures are remembered per data key (every decoder of the bytes is
/// affected); decoding failures per object key (another decoder may still succeed with the same
/// bytes). Forgetting a data key forgets both kinds.
struct FailureMemory {
    /// One key's failures in a row: the last error, until when it is refused, and how many.
    private struct Record {
        var error: ManagedCacheError
        var until: MonotonicInstant
        var failuresInARow: Int
    }

    private var byDataKey: [String: Record] = [:]
    private var byObjectKey: [ObjectKey: Record] = [:]
    /// The data keys refused, and until when, readable without the manager's lock (see
    /// `RefusalHints`).
    let hints: RefusalHints

    init(hints: RefusalHints = RefusalHints()) {
        self.hints = hints
    }

    /// How long a key is refused after its `failuresInARow`-th failure in a row: `first`, doubled
    /// for each further failure, capped at `maximum` (and `maximum` alone when `first` is not
    /// positive or exceeds it).
    static func interval(afterFailures failuresInARow: Int, first: Double, maximum: Double) -> Double {
        guard first > 0, first < maximum else { return maximum }
        let doublings = Double(max(0, failuresInARow - 1))
        return min(maximum, first * pow(2, min(doublings, 60)))
    }

    /// The remembered failure of `key`'s bytes or of `key` itself, if it is still refused.
    func failure(for key: ObjectKey, now: MonotonicInstant = .now) -> ManagedCacheError? {
        if let error = failure(forDataKey: key.dataKey, now: now) { return error }
        guard let record = byObjectKey[key], record.until > now else { return nil }
        return record.error
    }

    /// The remembered failure of the bytes of `dataKey`, if it is still refused.
    func failure(forDataKey dataKey: String, now: MonotonicInstant = .now) -> ManagedCacheError? {
        guard let record = byDataKey[dataKey], record.until > now else { return nil }
        return record.error
    }

    /// Records a failure to load the bytes of `dataKey`, if it is permanent and the policy
    /// remembers failures.
    mutating func record(_ error: ManagedCacheError, forDataKey dataKey: String, policy: LoadPolicy, now: MonotonicInstant = .now) {
        guard error.isPermanent, policy.failureMemoryInterval > 0 else { return }
        pruneIfLarge(now: now)
        let record = Self.next(after: byDataKey[dataKey], error: error, policy: policy, now: now)
        byDataKey[dataKey] = record
        hints.note(dataKey, refusedUntil: record.until, now: now)
    }

    /// Records a failure to decode `key`, if it is permanent and the policy remembers failures.
    mutating func record(_ error: ManagedCacheError, for key: ObjectKey, policy: LoadPolicy, now: MonotonicInstant = .now) {
        guard error.isPermanent, policy.failureMemoryInterval > 0 else { return }
        pruneIfLarge(now: now)
        let record = Self.next(after: byObjectKey[key], error: error, policy: policy, now: now)
        byObjectKey[key] = record
        hints.note(key.dataKey, refusedUntil: record.until, now: now)
    }

    /// `key` decoded: its failures in a row, and its bytes', are over.
    mutating func succeeded(_ key: ObjectKey) {
        guard !byDataKey.isEmpty || !byObjectKey.isEmpty else { return }
        byDataKey.removeValue(forKey: key.dataKey)
        byObjectKey.removeValue(forKey: key)
    }

    /// Forgets the failures of `dataKey`'s bytes and of every object decoded from them.
    mutating func forget(dataKey: String) {
        byDataKey.removeValue(forKey: dataKey)
        if byObjectKey.keys.contains(where: { $0.dataKey == dataKey }) {
            byObjectKey = byObjectKey.filter { $0.key.dataKey != dataKey }
        }
    }

    /// Forgets the decoding failure of `key` alone (an object stored under it).
    mutating func forget(_ key: ObjectKey) {
        byObjectKey.removeValue(forKey: key)
    }

    mutating func forgetAll() {
        byDataKey.removeAll()
        byObjectKey.removeAll()
    }

    private static func next(after previous: Record?, error: ManagedCacheError, policy: LoadPolicy, now: MonotonicInstant) -> Record {
        let failures = (previous?.failuresInARow ?? 0) + 1
        let interval = interval(
            afterFailures: failures, first: policy.failureMemoryFirstInterval, maximum: policy.failureMemoryInterval)
        return Record(error: error, until: now.adding(seconds: interval), failuresInARow: failures)
    }

    /// Past 10,000 keys, drops those no longer refused (their count of failures in a row with them).
    private mutating func pruneIfLarge(now: MonotonicInstant) {
        guard byDataKey.count + byObjectKey.count > 10_000 else { return }
        byDataKey = byDataKey.filter { $0.value.until > now }
        byObjectKey = byObjectKey.filter { $0.value.until > now }
    }
}

/// Which data keys the failure memory may refuse, and until when, behind a lock of its own: asked
/// by `manage` before the manager's lock, only to skip work that a refusal makes useless (the file
/// cache's miss shortcut hashes the key with SHA-256, more than half the cost of a call the
/// failure memory then answers). It decides nothing: the failure memory, under the manager's
/// lock, still answers. So it may be out of date either way: a key forgotten or that succeeded
/// since costs that call the file cache's lookup instead of the shortcut; a key not noted costs
/// the shortcut, as before.
final class RefusalHints: Sendable {
    private let refusedUntil = Lock<[String: MonotonicInstant]>([:])
    /// Past this many keys, those no longer refused are dropped, and all of them if more than
    /// half remain: a few microseconds under the manager's lock, at most once every `limit / 2`
    /// failures (with 1,024 keys and a prune on every failure past them, a burst of failures
    /// raised the p99 of `manage` calls starting loads beside it by a fifth).
    static let limit = 256

    /// Notes that `dataKey` (its bytes, or an object decoded from them) is refused until `until`,
    /// or until a later time already noted: the bytes' refusal and an object's are separate
    /// records, and the one that ends first does not end the other.
    func note(_ dataKey: String, refusedUntil until: MonotonicInstant, now: MonotonicInstant) {
        refusedUntil.withLock { keys in
            keys[dataKey] = max(keys[dataKey] ?? until, until)
            guard keys.count > Self.limit else { return }
            keys = keys.filter { $0.value > now }
            if keys.count > Self.limit / 2 { keys.removeAll() }
        }
    }

    /// Whether the failure memory may refuse `dataKey` at `now`.
    func mayRefuse(_ dataKey: String, now: MonotonicInstant) -> Bool {
        refusedUntil.withLock { keys in
            guard !keys.isEmpty, let until = keys[dataKey] else { return false }
            return until > now
        }
    }
}
