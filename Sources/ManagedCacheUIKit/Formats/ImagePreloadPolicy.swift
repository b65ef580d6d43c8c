import ManagedCache

/// Which stored variants of a format are read into memory when the format is first used
/// (Haneke's `HNKPreloadPolicy`): the engine's `PreloadPolicy` (`none`, `lastSession`, `all`),
/// run by `ObjectManager.preloadFromFileCache(_:decoder:limit:)`.
public typealias ImagePreloadPolicy = PreloadPolicy
