import Foundation

/// The limits a cache enforces; `nil` means unlimited.
struct CacheLimits: Sendable {
    var byteLimit: Int?
    var countLimit: Int?
    var maximumAge: TimeInterval?

    /// Whether `count` entries of `bytes` total exceed a limit.
    func exceeded(count: Int, bytes: Int) -> Bool {
        if let countLimit, count > countLimit { return true }
        if let byteLimit, bytes > byteLimit { return true }
        return false
    }
}
