import Foundation
import TestSupport
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading an entry leaves its file's access time alone on Linux (`Posix.openForReading`): the
/// caches keep their own recency, and updating that time dirties the inode on every first read of
/// a fresh file.
@Suite(.offCooperativePool) struct FileCacheAccessTimeTests {
    /// An access time far before the modification time: under `relatime` (Linux's default) a
    /// plain read then updates it, so each test below first checks that this file system does.
    private static let longAgo = timespec(tv_sec: 1_000_000_000, tv_nsec: 0)

    #if os(Linux) && (arch(x86_64) || arch(arm64))
    @Test(arguments: CacheKind.allCases)
    func readingAnEntryLeavesItsAccessTimeAlone(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try kind.open(root)
            let bytes = testBytes(4000, seed: 11)
            let entry = try cache.store(bytes, forKey: "k", metadata: FileCacheMetadata())
            let control = root.appendingPathComponent("control")
            try bytes.write(to: control)
            try Self.setAccessTimeLongAgo(entry.fileURL.path)
            try Self.setAccessTimeLongAgo(control.path)

            // The control: a plain read updates the access time here (else, a `noatime` mount,
            // nothing below could fail, and the test says so).
            _ = try Data(contentsOf: control)
            try #require(
                try Self.accessTime(control.path) != Self.longAgo.tv_sec,
                "this file system does not update access times on read")

            #expect(try cache.readData(for: entry) == bytes)
            try cache.verify(entry)
            #expect(try Self.accessTime(entry.fileURL.path) == Self.longAgo.tv_sec)
        }
    }
    #endif

    /// The Linux-only flag changes nothing else: a file opens, a missing one is `-ENOENT`.
    @Test func aPresentFileOpensAndAMissingOneIsReported() throws {
        try withTemporaryDirectory { root in
            let path = root.appendingPathComponent("present").path
            try Data("present".utf8).write(to: URL(fileURLWithPath: path))
            let descriptor = Posix.openForReading(path)
            #expect(descriptor >= 0)
            Posix.closeFile(descriptor)
            #expect(Posix.openForReading(root.appendingPathComponent("missing").path) == -ENOENT)
        }
    }

    #if os(Linux) && (arch(x86_64) || arch(arm64))
    private static func setAccessTimeLongAgo(_ path: String) throws {
        // Access time long ago, modification time now (`UTIME_NOW`, Linux's value).
        var times = [longAgo, timespec(tv_sec: 0, tv_nsec: Int((1 << 30) - 1))]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    private static func accessTime(_ path: String) throws -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return info.st_atim.tv_sec
    }
    #endif
}
