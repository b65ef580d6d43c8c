import Foundation

/// Which file-cache entries are decoded into the memory cache at start-up (Haneke's preload policy).
public enum PreloadPolicy: String, Sendable, Hashable, CaseIterable {
    /// Nothing is preloaded. The default.
    case none
    /// Only the entries used during the previous session of the file cache.
    case lastSession
    /// Every entry, most recently used first, until the memory cache is full.
    case all
}

extension ObjectManager {
    /// Decodes file-cache entries into the memory cache in the background: Haneke's preload, so the
    /// first screen of a new launch comes from memory.
    ///
    /// The preload stops as soon as a real request needs the disk or the network, so it never
    /// delays what the user is waiting for. Entries already in memory are skipped. For decoders
    /// that store variants, the stored variants are preloaded.
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager).
    /// manager.preloadFromFileCache(.lastSession, decoder: DataDecoder())  // at launch
    /// ```
    ///
    /// - Parameters:
    ///   - policy: Which entries: ``PreloadPolicy/lastSession`` or ``PreloadPolicy/all``;
    ///     ``PreloadPolicy/none`` does nothing.
    ///   - decoder: The decoder the app's users will ask with (its identifier is part of the key).
    ///   - limit: The most objects to preload. Default `nil`: the memory cache's count limit.
    /// - Returns: The preload's task, whose value is the number of objects preloaded (0 at once
    ///   without a file cache).
    @discardableResult
    public func preloadFromFileCache<Decoder: ObjectDecoding>(
        _ policy: PreloadPolicy, decoder: Decoder, limit: Int? = nil
    ) -> Task<Int, Never> {
        guard policy != .none, let fileCache else { return Task { 0 } }
        let limit = max(0, limit ?? memoryCache.countLimit)
        let erased = AnyObjectDecoder(decoder)
        // Created under the lock, so a request arriving while it starts finds it and can stop it.
        return state.withLock { state in
            let task = LoadingTask.start(priority: .utility) { [weak self] () -> Int in
                let preloaded = self?.fileCacheReader.preload(policy, from: fileCache, decoder: erased, limit: limit) ?? 0
                self?.state.withLock { $0.statistics.preloadedObjects += preloaded }
                return preloaded
            }
            state.preloads.append(task)
            return task
        }
    }
}
