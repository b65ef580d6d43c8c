import Foundation

/// A download interrupted part-way whose bytes a file cache kept, so the next request for the key
/// fetches only the rest (`Range` + `If-Range`).
public struct PartialDownload: Sendable, Hashable {
    /// The key the download was for.
    public let key: String
    /// How many bytes are kept.
    public let byteCount: Int
    /// The `ETag` (or `Last-Modified`) the bytes came with; the server resumes only if it still matches.
    public let validator: String

    /// Creates a partial-download description (for implementers of `FileCaching`).
    public init(key: String, byteCount: Int, validator: String) {
        self.key = key
        self.byteCount = byteCount
        self.validator = validator
    }
}

/// Resumable downloads are optional for a file cache: these defaults keep nothing, so a cache that
/// does not implement them simply restarts interrupted downloads. `FileCache` implements them.
extension FileCaching {
    /// The partial data kept for `key`, if any.
    public func partialDownload(forKey key: String) -> PartialDownload? { nil }

    /// A writer that continues `partial`: its bytes are already written; `write` appends the rest.
    public func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter {
        throw FileCacheError.io(operation: "resume", errno: 95)  // EOPNOTSUPP
    }

    /// Drops the partial data kept for `key`.
    public func discardPartialDownload(forKey key: String) {}
}

extension FileCacheWriter {
    /// Keeps what was written as a partial download of its key, tagged with `validator`, instead of
    /// discarding it. Default: `abort()`.
    public func suspend(validator: String) { abort() }
}
