import Foundation

/// The limits a cache enforces; `nil` means unlimited. The byte and count limits apply to the
/// entries that are not pinned; pinned entries have their quota of bytes (`pinnedByteLimit`).
struct CacheLimits: Sendable {
    var byteLimit: Int?
    var countLimit: Int?
    var maximumAge: TimeInterval?
    var pinnedByteLimit: Int?

    /// Whether `count` unpinned entries of `bytes` total exceed a limit.
    func exceeded(count: Int, bytes: Int) -> Bool {
        if let countLimit, count > countLimit { return true }
        if let byteLimit, bytes > byteLimit { return true }
        return false
    }
}
