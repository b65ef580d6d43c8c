import Foundation
import LoopbackServer
import ManagedCache
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file cache's disk misbehaves while a manager uses it: the directory is
/// deleted, replaced by a file, made read-only, fills up, or becomes unreadable. Real file
/// systems where the test may mount them (a 1 MiB tmpfs that fills up; a tmpfs remounted
/// read-only), an injected failing `FileCaching` wrapper always (root ignores permissions, so
/// `chmod` proves nothing here).
///
/// In every case: loads still succeed from the network, the failures are reported (in
/// `statistics.fileCacheErrors` and to the event handler, with the key), nothing corrupt is ever
/// served (a validating decoder checks every object, and the bytes are compared), and once the
/// disk is usable again the cache recovers: new downloads are stored and later served from disk.
@Suite(.offCooperativePool) struct DiskTroubleTests {
    static let payloadSize = 20_000

    static func payload(_ path: String) -> Data { FramedBody.payload(seed: path, count: payloadSize) }

    /// Keys do not depend on the server's port, so a later harness finds what an earlier stored.
    static func oid(_ path: String) -> String { "disk:" + path }

    /// A manager over a file cache, a loopback server answering `/d/<name>` with framed bodies,
    /// and the events the manager reported.
    struct Harness {
        let server: LoopbackServer
        let manager: ObjectManager
        let events: EventLog

        init(fileCache: any FileCaching) throws {
            server = try LoopbackServer()
            server.setFallback { request in
                .ok(FramedBody.wrap(DiskTroubleTests.payload(request.path)), contentType: FramedBody.contentType)
            }
            let events = EventLog()
            self.events = events
            manager = makeNetworkManager(fileCache: fileCache) { configuration in
                configuration.loadingBufferSize = 1_000
                configuration.eventHandler = events.handler
            }
        }

        /// Loads `paths` with new users (released on return) and checks every outcome: the right
        /// object or a reported failure, never wrong bytes. Returns the origins.
        func load(_ paths: [String], name: String, tally: ReliabilityTally) async -> [String: [DataOrigin]] {
            let decoder = FramedDecoder()
            var users: [String: RecordingUser<FramedDecoder>] = [:]
            for path in paths {
                let user = RecordingUser(ObjectRequest(url: server.url(path), oid: DiskTroubleTests.oid(path)), decoder: decoder)
                users[path] = user
                manager.manage(user)
            }
            let all = Array(users.values)
            let done = await waitUntil { all.allSatisfy { $0.finalCallbackCount >= 1 } }
            tally.check(done, name, "loads did not finish within \(waitBound) s")
            for (path, user) in users {
                tally.add(1, to: "loads")
                if let object = user.objects.first, object.bytes != DiskTroubleTests.payload(path) {
                    tally.add(1, to: "corrupt objects served")
                    tally.check(false, name, "\(path): wrong bytes served")
                }
                tally.check(user.objects.count == 1, name, "\(path) failed: \(user.errors)")
            }
            return users.mapValues(\.origins)
        }

        /// Checks that failures were reported, counted, and named their key.
        func expectReportedFailures(_ name: String, since errorsBefore: Int, tally: ReliabilityTally) {
            let counted = manager.statistics.fileCacheErrors - errorsBefore
            let reported = events.fileCacheFailureEvents
            tally.check(
                counted > 0 && !reported.isEmpty, name, "no file-cache failure reported (counted \(counted), events \(reported.count))")
            tally.check(
                reported.allSatisfy { !$0.key.isEmpty }, name,
                "failures reported without their key: \(reported.filter { $0.key.isEmpty }.map(\.operation))")
            tally.add(counted, to: "failures reported")
        }
    }

    /// Entries of `cache` must read back exactly what their keys are served with.
    static func checkStoredEntries(_ cache: any FileCaching, name: String, tally: ReliabilityTally) {
        for entry in cache.entriesByRecency(limit: .max) {
            guard let data = try? cache.readData(for: entry) else { continue }  // unreadable is not served
            let path = String(entry.key.dropFirst(oid("").count))
            tally.check(data == FramedBody.wrap(payload(path)), name, "entry \(path) holds wrong bytes")
        }
    }

    @Test func aMisbehavingDiskNeverBreaksLoadsNorServesCorruptData() async throws {
        let tally = ReliabilityTally(item: "disk trouble")
        for figure in ["loads", "failures reported", "corrupt objects served"] { tally.add(0, to: figure) }
        await withTaskGroup(of: Void.self) { group in
            for kind in CacheKind.allCases {
                group.addTask { await Self.directoryDeleted(kind, tally: tally) }
                group.addTask { await Self.directoryReplacedByAFile(kind, tally: tally) }
                group.addTask { await Self.injected(.readOnly, kind: kind, tally: tally) }
                group.addTask { await Self.injected(.full(remainingBytes: 3 * Self.payloadSize), kind: kind, tally: tally) }
                group.addTask { await Self.injected(.unreadable, kind: kind, tally: tally) }
            }
        }
        // The real file systems, one at a time (mounting is not something to do in parallel).
        for kind in CacheKind.allCases {
            await Self.realFullDisk(kind, tally: tally)
            await Self.realReadOnlyDisk(kind, tally: tally)
        }
        tally.report()
        #expect(tally.figure("corrupt objects served") == 0)
        #expect(tally.failureCount == 0)
    }

    // MARK: The directory goes away

    private static func directoryDeleted(_ kind: CacheKind, tally: ReliabilityTally) async {
        let name = "\(kind.testDescription): directory deleted"
        tally.addCase(name)
        let directory = TemporaryDirectory(prefix: "reliability-disk")
        let root = directory.appending("cache")
        guard let cache = try? kind.open(root), let harness = try? Harness(fileCache: cache) else {
            tally.check(false, name, "setup failed")
            return
        }
        defer { harness.server.stop() }
        let before = (0..<6).map { "/d/before-\($0)" }
        _ = await harness.load(before, name: name, tally: tally)
        let errorsBefore = harness.manager.statistics.fileCacheErrors
        try? FileManager.default.removeItem(at: root)
        harness.manager.removeAllObjects()

        let after = (0..<6).map { "/d/after-\($0)" }
        let origins = await harness.load(before + after, name: name, tally: tally)
        tally.check(before.allSatisfy { origins[$0] == [.network] }, name, "lost entries were not reloaded from the network")
        harness.expectReportedFailures(name, since: errorsBefore, tally: tally)

        // Recovered: what was downloaded since is on disk again and served from there.
        harness.manager.removeAllObjects()
        let again = await harness.load(before + after, name: name, tally: tally)
        tally.check(
            again.values.allSatisfy { $0 == [.fileCache] }, name,
            "the recreated cache does not serve from disk: \(Set(again.values.flatMap { $0 }))")
        checkStoredEntries(cache, name: name, tally: tally)
    }

    private static func directoryReplacedByAFile(_ kind: CacheKind, tally: ReliabilityTally) async {
        let name = "\(kind.testDescription): directory replaced by a file"
        tally.addCase(name)
        let directory = TemporaryDirectory(prefix: "reliability-disk")
        let root = directory.appending("cache")
        guard let cache = try? kind.open(root), let harness = try? Harness(fileCache: cache) else {
            tally.check(false, name, "setup failed")
            return
        }
        defer { harness.server.stop() }
        let before = (0..<6).map { "/d/before-\($0)" }
        _ = await harness.load(before, name: name, tally: tally)
        let errorsBefore = harness.manager.statistics.fileCacheErrors
        try? FileManager.default.removeItem(at: root)
        try? Data("not a directory".utf8).write(to: root)
        harness.manager.removeAllObjects()

        let during = (0..<6).map { "/d/during-\($0)" }
        let origins = await harness.load(before + during, name: name, tally: tally)
        tally.check(origins.values.allSatisfy { $0 == [.network] }, name, "loads did not come from the network")
        harness.expectReportedFailures(name, since: errorsBefore, tally: tally)
        tally.check((try? Data(contentsOf: root)) == Data("not a directory".utf8), name, "the file in the cache's place was changed")

        // The disk is usable again.
        try? FileManager.default.removeItem(at: root)
        let after = (0..<6).map { "/d/after-\($0)" }
        _ = await harness.load(after, name: name, tally: tally)
        harness.manager.removeAllObjects()
        let again = await harness.load(after, name: name, tally: tally)
        tally.check(again.values.allSatisfy { $0 == [.fileCache] }, name, "after recovery new downloads are not served from disk")
        checkStoredEntries(cache, name: name, tally: tally)
    }

    // MARK: Injected failures

    private static func injected(_ fault: FaultyFileCache.Fault, kind: CacheKind, tally: ReliabilityTally) async {
        let name = "\(kind.testDescription): injected \(fault)"
        tally.addCase(name)
        let directory = TemporaryDirectory(prefix: "reliability-disk")
        guard let base = try? kind.open(directory.appending("cache")) else {
            tally.check(false, name, "setup failed")
            return
        }
        let cache = FaultyFileCache(wrapping: base)
        guard let harness = try? Harness(fileCache: cache) else {
            tally.check(false, name, "setup failed")
            return
        }
        defer { harness.server.stop() }
        let before = (0..<4).map { "/d/before-\($0)" }
        _ = await harness.load(before, name: name, tally: tally)
        let errorsBefore = harness.manager.statistics.fileCacheErrors
        cache.fault = fault
        harness.manager.removeAllObjects()

        let during = (0..<8).map { "/d/during-\($0)" }
        let origins = await harness.load(before + during, name: name, tally: tally)
        switch fault {
        case .readOnly:
            // A read-only disk still serves what it holds.
            tally.check(before.allSatisfy { origins[$0] == [.fileCache] }, name, "cached entries not served from the read-only disk")
            tally.check(
                during.allSatisfy { origins[$0] == [.network] && base.entry(forKey: oid($0)) == nil },
                name, "something was written to the read-only disk")
        case .full:
            tally.check(during.allSatisfy { origins[$0] == [.network] }, name, "new keys did not come from the network")
        case .unreadable:
            tally.check(origins.values.allSatisfy { $0 == [.network] }, name, "a load claimed to come from an unreadable disk")
        case .none:
            break
        }
        if fault != .unreadable {
            harness.expectReportedFailures(name, since: errorsBefore, tally: tally)
        }
        tally.check(cache.injectedFailures > 0, name, "the fault was never hit")
        checkStoredEntries(base, name: name, tally: tally)

        // The disk is fine again: downloads are stored and come back from disk.
        cache.fault = .none
        let after = (0..<4).map { "/d/after-\($0)" }
        _ = await harness.load(after, name: name, tally: tally)
        harness.manager.removeAllObjects()
        let again = await harness.load(after, name: name, tally: tally)
        tally.check(again.values.allSatisfy { $0 == [.fileCache] }, name, "after recovery new downloads are not served from disk")
        checkStoredEntries(base, name: name, tally: tally)
    }

    // MARK: Real file systems

    /// A tmpfs mounted for the test, or the reason it could not be.
    final class Tmpfs {
        let path: String

        #if os(Linux)
        init(at path: String, bytes: Int) throws(MountRefused) {
            self.path = path
            let result = Glibc.mount("tmpfs", path, "tmpfs", 0, "size=\(bytes)")
            if result != 0 { throw MountRefused(reason: String(cString: strerror(errno))) }
        }

        func remount(readOnly: Bool, bytes: Int) -> Bool {
            let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
            return Glibc.mount("tmpfs", path, "tmpfs", flags, "size=\(bytes)") == 0
        }

        deinit {
            _ = umount2(path, Int32(MNT_DETACH))
        }
        #else
        // tmpfs and mount(2) with these arguments are Linux's: elsewhere the real-file-system
        // tests report the mount as refused and skip, as they do on Linux without privileges.
        init(at path: String, bytes: Int) throws(MountRefused) {
            self.path = path
            throw MountRefused(reason: "tmpfs mounts are Linux-only")
        }

        func remount(readOnly: Bool, bytes: Int) -> Bool { false }
        #endif
    }

    struct MountRefused: Error {
        let reason: String
    }

    /// Mounts a tmpfs of `bytes` in a new directory, or prints why it cannot and returns nil.
    static func mountTmpfs(bytes: Int, name: String, directory: TemporaryDirectory) -> Tmpfs? {
        let mountPoint = directory.appending("mnt")
        try? FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        do {
            return try Tmpfs(at: mountPoint.path, bytes: bytes)
        } catch {
            print(
                "reliability: disk trouble: \(name) skipped: mounting a tmpfs is not permitted here (\(error.reason)); the injected failures cover it"
            )
            return nil
        }
    }

    private static func realFullDisk(_ kind: CacheKind, tally: ReliabilityTally) async {
        let name = "\(kind.testDescription): full tmpfs"
        let directory = TemporaryDirectory(prefix: "reliability-disk")
        guard let tmpfs = mountTmpfs(bytes: 1 << 20, name: name, directory: directory) else { return }
        tally.addCase(name)
        tally.add(1, to: "real file systems")
        let root = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("cache")
        let filler = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("filler")
        guard let cache = try? kind.open(root), let harness = try? Harness(fileCache: cache) else {
            tally.check(false, name, "setup failed")
            return
        }
        defer { harness.server.stop() }
        // Leave room for about three entries, then ask for twelve.
        let free = Self.freeBytes(tmpfs.path)
        try? Data(count: max(0, free - 3 * payloadSize - 8_192)).write(to: filler)
        let errorsBefore = harness.manager.statistics.fileCacheErrors
        let during = (0..<12).map { "/d/full-\($0)" }
        let origins = await harness.load(during, name: name, tally: tally)
        tally.check(origins.values.allSatisfy { $0 == [.network] }, name, "loads did not come from the network")
        harness.expectReportedFailures(name, since: errorsBefore, tally: tally)
        checkStoredEntries(cache, name: name, tally: tally)
        // A second instance reading the same directory finds nothing damaged either.
        if let second = try? kind.open(root) { checkStoredEntries(second, name: name, tally: tally) }

        // Space is freed: the cache stores again.
        try? FileManager.default.removeItem(at: filler)
        let after = (0..<6).map { "/d/freed-\($0)" }
        _ = await harness.load(after, name: name, tally: tally)
        harness.manager.removeAllObjects()
        let again = await harness.load(after, name: name, tally: tally)
        tally.check(again.values.allSatisfy { $0 == [.fileCache] }, name, "after space was freed new downloads are not served from disk")
        checkStoredEntries(cache, name: name, tally: tally)
    }

    /// A file system cannot be remounted read-only while a cache holds its journal open for
    /// writing (`EBUSY`), so the read-only disk "while in use" is the injected fault above. What a
    /// real one can show: opening a cache on a read-only file system fails with a clear error
    /// (no crash, no hang), and the entries are intact once it is writable again.
    private static func realReadOnlyDisk(_ kind: CacheKind, tally: ReliabilityTally) async {
        let name = "\(kind.testDescription): tmpfs remounted read-only"
        let directory = TemporaryDirectory(prefix: "reliability-disk")
        guard let tmpfs = mountTmpfs(bytes: 4 << 20, name: name, directory: directory) else { return }
        let root = URL(fileURLWithPath: tmpfs.path).appendingPathComponent("cache")
        let before = (0..<4).map { "/d/before-\($0)" }
        do {
            guard let cache = try? kind.open(root), let harness = try? Harness(fileCache: cache) else {
                tally.check(false, name, "setup failed")
                return
            }
            _ = await harness.load(before, name: name, tally: tally)
            harness.server.stop()
        }
        guard tmpfs.remount(readOnly: true, bytes: 4 << 20) else {
            print(
                "reliability: disk trouble: \(name) skipped: remounting read-only is not permitted here (\(String(cString: strerror(errno))))"
            )
            return
        }
        tally.addCase(name)
        tally.add(1, to: "real file systems")
        do {
            _ = try kind.open(root)
            tally.check(false, name, "a cache opened on a read-only file system")
        } catch let error as FileCacheError {
            tally.check(error == .io(operation: "open cache lock files", errno: EROFS), name, "opening failed with \(error)")
        } catch {
            tally.check(false, name, "opening failed with an untyped error \(error)")
        }

        // Writable again: everything stored before is there, intact, and served from disk.
        tally.check(tmpfs.remount(readOnly: false, bytes: 4 << 20), name, "could not remount read-write")
        guard let cache = try? kind.open(root), let harness = try? Harness(fileCache: cache) else {
            tally.check(false, name, "the cache does not reopen on the writable file system")
            return
        }
        defer { harness.server.stop() }
        let again = await harness.load(before, name: name, tally: tally)
        tally.check(again.values.allSatisfy { $0 == [.fileCache] }, name, "entries stored before were not served from disk: \(again)")
        tally.check(harness.server.totalRequestCount == 0, name, "entries stored before were downloaded again")
        checkStoredEntries(cache, name: name, tally: tally)
    }

    static func freeBytes(_ path: String) -> Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}

extension EventLog {
    /// File-cache failures reported: key and operation of each.
    var fileCacheFailureEvents: [(key: String, operation: FileCacheOperation)] {
        all.compactMap { if case .fileCacheFailure(let key, let operation, _) = $0 { return (key, operation) } else { return nil } }
    }
}
