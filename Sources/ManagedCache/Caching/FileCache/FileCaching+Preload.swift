/// Defaults for the preload queries, so a custom file cache need not implement them: it is then
/// simply never preloaded from.
extension FileCaching {
    /// No entries: this cache does not support preloading.
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: An empty array.
    public func entriesByRecency(limit: Int) -> [FileCacheEntry] { [] }

    /// No entries: this cache does not record sessions.
    ///
    /// - Parameter limit: The most entries to return.
    /// - Returns: An empty array.
    public func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] { [] }
}
