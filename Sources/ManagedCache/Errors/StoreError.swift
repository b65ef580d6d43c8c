import Foundation

/// Why a stored object did not reach the file cache, or could not be made.
///
/// The memory part of a store never fails: once `ObjectManager.store` returns, the object is in
/// the memory cache (unless the request's policy keeps it out) and with every user of its key.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request's key is empty: nothing can be stored under it.
    case invalidRequest(reason: String)
    /// The file cache was asked for, but the manager has none or the request's policy keeps the
    /// object out of it (`cacheInFile == false`).
    case fileCacheUnavailable
    /// The decoder cannot turn the object back into bytes (`ObjectDecoding.encode(_:)` returned `nil`).
    case encodingUnsupported
    /// The decoder's `encode(_:)` threw.
    case encodingFailed(reason: String)
    /// The closure making the object threw (`store(for:decoder:toFileCache:pinned:cost:making:completion:)`).
    case makingFailed(reason: String)
    /// The file cache refused the bytes (disk full, read-only, …; a pinned store over the pinned
    /// quota: ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)``, or in a
    /// cache that cannot pin: ``FileCacheError/pinningUnsupported``).
    case fileCacheFailed(FileCacheError)
    /// A later store of the same key replaced this object before its bytes were written, or the
    /// manager cancelled every load (`cancelAll()`) while it was being made.
    case superseded

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .fileCacheUnavailable: "no file cache for this object"
        case .encodingUnsupported: "the decoder cannot encode this object"
        case .encodingFailed(let reason): "encoding failed: \(reason)"
        case .makingFailed(let reason): "making the object failed: \(reason)"
        case .fileCacheFailed(let error): "the file cache failed: \(error)"
        case .superseded: "superseded by a later store"
        }
    }
}
