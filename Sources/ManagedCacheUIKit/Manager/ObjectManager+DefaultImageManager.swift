import ManagedCache
import ManagedCacheLocking

extension ObjectManager {
    private static let defaultImageManagerStorage = Lock<ObjectManager>(.shared)

    /// The manager `ManagedImageView`s use when none is passed to them: `ObjectManager.shared`
    /// until an app replaces it, once, at start-up, before creating views:
    ///
    /// ```swift
    /// ObjectManager.defaultImageManager = ObjectManager(configuration: .images(fileCache: myFileCache))
    /// ```
    ///
    /// Views keep the manager they were created with; replacing the default later affects new views only.
    public static var defaultImageManager: ObjectManager {
        get { defaultImageManagerStorage.withLock { $0 } }
        set { defaultImageManagerStorage.withLock { $0 = newValue } }
    }
}

extension ObjectManager.Configuration {
    /// A configuration for a manager of images.
    ///
    /// - The memory cache is bounded by `memoryCacheCostLimit` bytes of decoded bitmaps (default
    ///   96 MiB), with a count limit of 500 that rarely binds: image costs are width × height × 4,
    ///   so the byte limit is the one that matters (HJCache's 20 objects would hold one screen of
    ///   a feed, at most).
    /// - The loading buffer keeps HJCache's 12: at least one screen of cells.
    /// - `fileCache`, when given, keeps downloads between runs.
    public static func images(
        memoryCacheCostLimit: Int = 96 << 20, fileCache: (any FileCaching)? = nil
    ) -> ObjectManager.Configuration {
        var configuration = ObjectManager.Configuration()
        configuration.memoryCacheCountLimit = 500
        configuration.memoryCacheCostLimit = memoryCacheCostLimit
        configuration.loadingBufferSize = 12
        configuration.fileCache = fileCache
        return configuration
    }
}
