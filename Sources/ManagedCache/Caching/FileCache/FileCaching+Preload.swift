/// Defaults for the preload queries, so a custom file cache need not implement them: it is then
/// simply never preloaded from.
extension FileCaching {
    /// No entries: this cache does not support preloading.
    public func entriesByRecency(limit: Int) -> [FileCacheEntry] { [] }

    /// No entries: this cache does not record sessions.
    public func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] { [] }
}
