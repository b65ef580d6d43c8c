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

    /// Creates a partial-download description (for implementers of ``FileCaching``).
    ///
    /// - Parameters:
    ///   - key: The key the download was for.
    ///   - byteCount: How many bytes are kept.
    ///   - validator: The `ETag` or `Last-Modified` the bytes came with.
    public init(key: String, byteCount: Int, validator: String) {
        self.key = key
        self.byteCount = byteCount
        self.validator = validator
    }
}

/// Resumable downloads are optional for a file cache: these defaults keep nothing, so a cache that
/// does not implement them simply restarts interrupted downloads. `FileCache` implements them.
extension FileCaching {
    /// Keeps nothing: a cache without this method restarts interrupted downloads.
    ///
    /// - Parameter key: The data key of the download.
    /// - Returns: `nil`.
    public func partialDownload(forKey key: String) -> PartialDownload? { nil }

    /// Cannot resume: a cache without this method restarts interrupted downloads.
    ///
    /// - Parameter partial: The partial download to continue.
    /// - Returns: Never returns.
    /// - Throws: ``FileCacheError/io(operation:errno:)`` with `EOPNOTSUPP`, always.
    public func makeWriter(resuming partial: PartialDownload) throws -> any FileCacheWriter {
        throw FileCacheError.io(operation: "resume", errno: EOPNOTSUPP)  // 95 on Linux, 102 on Darwin
    }

    /// Does nothing: nothing is kept.
    ///
    /// - Parameter key: The data key of the interrupted download.
    public func discardPartialDownload(forKey key: String) {}
}

extension FileCacheWriter {
    /// Discards what was written (``abort()``): a writer without this method keeps no partial
    /// downloads.
    ///
    /// - Parameter validator: The response's validator, unused here.
    public func suspend(validator: String) { abort() }
}
