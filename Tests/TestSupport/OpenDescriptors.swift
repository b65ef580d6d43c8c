import Foundation

/// The process's open file descriptors, read from `/proc/self/fd` (Linux only: Darwin has no
/// `/proc`; there the counts are `nil` and the tests that need them are skipped).
public enum OpenDescriptors {
    /// Whether descriptors can be counted on this platform.
    public static var canCount: Bool {
        #if os(Linux)
        return true
        #else
        return false
        #endif
    }

    /// How many descriptors are open, or `nil` where they cannot be counted.
    public static func total() -> Int? {
        #if os(Linux)
        return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).map(\.count)
        #else
        return nil
        #endif
    }

    /// How many open descriptors name a file inside `directory` (at any depth), or `nil` where
    /// they cannot be counted.
    public static func under(_ directory: URL) -> Int? {
        #if os(Linux)
        let prefix = directory.resolvingSymlinksInPath().standardizedFileURL.path + "/"
        let alternative = directory.standardizedFileURL.path + "/"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return names.reduce(0) { count, name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else {
                return count  // closed since the listing
            }
            return target.hasPrefix(prefix) || target.hasPrefix(alternative) ? count + 1 : count
        }
        #else
        return nil
        #endif
    }
}
