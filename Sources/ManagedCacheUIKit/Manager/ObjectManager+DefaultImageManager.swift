import Foundation
import ManagedCache
import ManagedCacheLocking

extension ObjectManager {
    /// `nil` until the default is first asked for (or set): creating it opens its file cache,
    /// which no app that brings its own manager should pay for.
    private static let defaultImageManagerStorage = Lock<ObjectManager?>(nil)

    /// The manager `ManagedImageView`, `ManagedImage` and `ManagedImageModel` use when none is
    /// passed to them: an image-tuned manager (``ObjectManager/Configuration/images(memoryCacheCostLimit:fileCache:)``)
    /// whose downloads are kept between runs in a `BigFileCache` in the user's caches directory
    /// (``ObjectManager/Configuration/defaultImageCacheDirectory``, at most 256 MiB, entries
    /// older than 7 days dropped). Made on first use; if its directory cannot be opened, it works
    /// without a file cache.
    ///
    /// An app replaces it once, at start-up, before creating views:
    ///
    /// ```swift
    /// let directory = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0].appendingPathComponent("Avatars")
    /// ObjectManager.defaultImageManager = ObjectManager(configuration: .images(fileCache: try FileCache(directory: directory)))
    /// ```
    ///
    /// Views keep the manager they were created with; replacing the default later affects new views only.
    public static var defaultImageManager: ObjectManager {
        get {
            defaultImageManagerStorage.withLock { stored in
                if let stored { return stored }
                let made = ObjectManager(configuration: .defaultImages())
                stored = made
                return made
            }
        }
        set { defaultImageManagerStorage.withLock { $0 = newValue } }
    }

    /// Whether ``defaultImageManager`` was made (or set) in this process: views and models given a
    /// manager of their own must never make it (it opens a file cache and a URL session). For
    /// tests, which never use the default manager (it would write to the user's caches directory).
    package static var hasMadeDefaultImageManager: Bool { defaultImageManagerStorage.withLock { $0 != nil } }
}

/// Configurations tuned for images.
extension ObjectManager.Configuration {
    /// A configuration for a manager of images.
    ///
    /// - The memory cache is bounded by `memoryCacheCostLimit` bytes of decoded bitmaps (default
    ///   96 MiB), with a count limit of 500 that rarely binds: image costs are width × height × 4,
    ///   so the byte limit is the one that matters (HJCache's 20 objects would hold one screen of
    ///   a feed, at most).
    /// - The loading buffer keeps HJCache's 12: at least one screen of cells.
    /// - `fileCache`, when given, keeps downloads between runs (default none; see
    ///   ``defaultImages(directory:)`` for one with a file cache).
    ///
    /// - Parameters:
    ///   - memoryCacheCostLimit: The memory cache's limit in bytes of decoded bitmaps. Default 96 MiB.
    ///   - fileCache: Where downloads are kept between runs. Default `nil`: none.
    /// - Returns: The configuration; change any field before making the manager.
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

    /// Where ``ObjectManager/defaultImageManager`` keeps its files: `ManagedCache/Images` in the
    /// user's caches directory (`Library/Caches` in an app's container on Apple platforms,
    /// `$XDG_CACHE_HOME` or `~/.cache` on Linux). The system may empty it when space runs low;
    /// the cache then starts over.
    public static var defaultImageCacheDirectory: URL {
        let caches =
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("ManagedCache", isDirectory: true).appendingPathComponent("Images", isDirectory: true)
    }

    /// The configuration of ``ObjectManager/defaultImageManager``: ``images(memoryCacheCostLimit:fileCache:)``
    /// with a `BigFileCache` in `directory` holding at most 256 MiB, dropping entries older than
    /// 7 days (the peers' usual disk defaults). Without a file cache if `directory` cannot be opened.
    ///
    /// - Parameter directory: Where the files go (default ``defaultImageCacheDirectory``).
    /// - Returns: The configuration; its `fileCache` is `nil` when the directory cannot be opened.
    public static func defaultImages(directory: URL = defaultImageCacheDirectory) -> ObjectManager.Configuration {
        let limits = BigFileCache.Configuration(byteLimit: 256 << 20, maximumAge: 7 * 24 * 3_600)
        return images(fileCache: try? BigFileCache(directory: directory, configuration: limits))
    }
}
