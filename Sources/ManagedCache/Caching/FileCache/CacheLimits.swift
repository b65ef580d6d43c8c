import Foundation

/// The limits a cache enforces; `nil` means unlimited. The byte and count limits apply to the
/// entries that are not pinned; pinned entries have their quota of bytes (`pinnedByteLimit`).
struct CacheLimits: Sendable, Equatable {
    var byteLimit: Int?
    var countLimit: Int?
    var maximumAge: TimeInterval?
    var pinnedByteLimit: Int?
    /// How long an operation waits at most for the cross-process journal lock before it throws
    /// `FileCacheError.busy`. Legitimate holds are short (an append, a compaction, a rename);
    /// a longer one is a process stopped or suspended in the middle of an operation.
    var lockWait: Double = CacheLimits.defaultLockWait

    /// One second: a hundred times the longest compaction of 100,000 entries measured here, and
    /// short enough that a caller on a deadline (an extension) is not kept.
    static let defaultLockWait: Double = 1

    /// Whether `count` unpinned entries of `bytes` total exceed a limit.
    func exceeded(count: Int, bytes: Int) -> Bool {
        if let countLimit, count > countLimit { return true }
        if let byteLimit, bytes > byteLimit { return true }
        return false
    }
}
