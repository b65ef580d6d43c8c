import Foundation

extension ObjectManager {
    // MARK: - Pinning bytes in the file cache

    /// Pins the bytes of `request` that are in the file cache, so that they stay there for
    /// offline use: no limit, trim or expiry of the file cache removes them until ``unpin(_:)``,
    /// a removal (``removeObject(for:decoder:fromFileCache:)`` with `fromFileCache`) or
    /// ``removeAllCaches()``. They count against the file cache's pinned quota
    /// (`FileCache.Configuration.pinnedByteLimit`), on top of its byte limit, and later downloads
    /// of the key stay pinned.
    ///
    /// For bytes already loaded (a feed's images the user chose to keep). To pin as they load,
    /// set ``LoadPolicy/pinsInFileCache`` on the requests (``PolicyOverrides/pinsInFileCache``),
    /// prefetching them included; to pin an object the app stores, pass `pinned: true` to
    /// ``store(_:for:decoder:toFileCache:pinned:cost:completion:)``.
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager), `photoURL` (a URL) and `coverURL` (a URL).
    /// for request in [photoURL, coverURL].map({ ObjectRequest(url: $0) }) {
    ///     do {
    ///         try manager.pin(request)
    ///     } catch FileCacheError.noEntry {
    ///         // Not downloaded yet: load it with `pinsInFileCache`.
    ///     } catch {
    ///         print("cannot keep \(request.url): \(error)")
    ///     }
    /// }
    /// ```
    ///
    /// Pins the request's downloaded bytes (its ``ObjectRequest/dataKey``), not the variants a
    /// decoder stores beside them, which are made again from the bytes. It writes one record to
    /// the file cache's index on the calling thread.
    ///
    /// - Parameter request: The request whose bytes to pin, matched by its data key.
    /// - Returns: The pinned file-cache entry, with its size.
    /// - Throws: ``FileCacheError/noEntry(key:)`` when the file cache has no bytes for the key,
    ///   ``FileCacheError/pinnedQuotaExceeded(key:byteCount:pinnedBytes:quota:)`` when they do
    ///   not fit the pinned quota (nothing changes), ``FileCacheError/pinningUnsupported`` when the
    ///   manager has no file cache or one that cannot pin, ``FileCacheError/io(operation:errno:)``
    ///   when the index cannot be written.
    @discardableResult
    public func pin(_ request: ObjectRequest) throws(FileCacheError) -> FileCacheEntry {
        guard let fileCache else { throw .pinningUnsupported }
        do {
            return try fileCache.pin(forKey: request.dataKey)
        } catch {
            throw FileCacheError(error)
        }
    }

    /// Unpins the bytes of `request` in the file cache: they are the most recently used entry
    /// under the file cache's limits again, and expire by their age as any other. Nothing happens
    /// when they are not pinned or not cached.
    ///
    /// - Parameter request: The request whose bytes to unpin, matched by its data key.
    /// - Throws: ``FileCacheError/pinningUnsupported`` when the manager has no file cache or one
    ///   that cannot pin, ``FileCacheError/io(operation:errno:)`` when the index cannot be written
    ///   (the bytes stay pinned).
    public func unpin(_ request: ObjectRequest) throws(FileCacheError) {
        guard let fileCache else { throw .pinningUnsupported }
        do {
            try fileCache.unpin(forKey: request.dataKey)
        } catch {
            throw FileCacheError(error)
        }
    }
}
