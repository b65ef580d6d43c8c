/// Which stored variants of a format are read into memory when the format is first used
/// (Haneke's `HNKPreloadPolicy`). Only meaningful for formats whose variants are stored on disk.
public enum ImagePreloadPolicy: String, Sendable, Hashable, CaseIterable {
    /// Nothing is preloaded. The default.
    case none
    /// Only the variants used during the previous session.
    case lastSession
    /// Every stored variant, until the memory cache is full.
    case all
}
