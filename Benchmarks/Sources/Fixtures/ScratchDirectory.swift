import Foundation

/// A fresh directory for one measurement, removed (with everything in it) when released.
///
/// On the disk by default (the system's temporary directory), or in memory (`/dev/shm`, tmpfs)
/// for the scenarios whose fixtures hold 100,000 files, which this machine's disk takes minutes
/// to create.
final class ScratchDirectory: Sendable {
    /// The directory.
    let url: URL

    /// Creates an empty directory named after `prefix`, in memory when `inMemory` and `/dev/shm` exists.
    init(prefix: String, inMemory: Bool = false) throws {
        let memory = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let base =
            inMemory && FileManager.default.fileExists(atPath: memory.path)
            ? memory : FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("ManagedCacheBenchmarks-\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the directory.
    func appending(_ component: String) -> URL {
        url.appendingPathComponent(component)
    }

    /// The file system holding the directory, from `/proc/mounts` (`ext4 on /`, `tmpfs on /dev/shm`).
    var fileSystem: String {
        #if os(Linux)
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
        var best: (mountPoint: String, type: String) = ("", "unknown")
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = String(fields[1])
            let prefix = mountPoint.hasSuffix("/") ? mountPoint : mountPoint + "/"
            if (url.path + "/").hasPrefix(prefix), mountPoint.count > best.mountPoint.count {
                best = (mountPoint, String(fields[2]))
            }
        }
        return "\(best.type) on \(best.mountPoint)"
        #else
        return "unknown"  // no /proc/mounts
        #endif
    }
}
