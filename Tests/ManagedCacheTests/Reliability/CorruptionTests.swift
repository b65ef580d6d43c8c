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

/// Entry files and the index damaged behind the cache's back while a manager
/// uses it. Users decode with `DataDecoder`, which accepts any bytes, so only the file cache's
/// own checks stand between a damaged file and a user. Every damage is detected (reported as a
/// corrupt entry), the damaged bytes are never delivered, and the key is reloaded from the
/// network exactly once (the loopback server counts the requests); undamaged keys keep coming
/// from disk.
@Suite(.exclusiveOfChildProcesses, .offCooperativePool) struct CorruptionTests {
    enum Damage: String, CaseIterable, Sendable {
        case firstByteFlipped, middleByteFlipped, lastByteFlipped, truncatedToHalf, truncatedToZero, oneByteAppended,
            deleted, zeroFilled, replacedByAnotherEntrysFile
    }

    enum JournalDamage: String, CaseIterable, Sendable {
        case garbageAppended, truncatedMidRecord, byteFlippedInTheMiddle, replacedByGarbage, deleted, emptied
    }

    /// Small entries are read whole (`readData`); large ones, above the manager's in-memory
    /// threshold, are verified (`verify`) and handed over by file.
    static let sizes = [2_000, 40_000]
    static let inMemoryThreshold = 16_000

    static func body(_ path: String, size: Int) -> Data { FramedBody.payload(seed: path, count: size) }

    /// A server whose `/k/<size>/<name>` answers `body(path, size)`.
    static func makeServer() throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.setFallback { request in
            let parts = request.path.split(separator: "/")
            guard parts.count == 3, parts[0] == "k", let size = Int(parts[1]) else { return nil }
            return .ok(body(request.path, size: size))
        }
        return server
    }

    static func makeManager(_ fileCache: any FileCaching, events: EventLog) -> ObjectManager {
        makeNetworkManager(fileCache: fileCache) { configuration in
            configuration.inMemoryThreshold = inMemoryThreshold
            configuration.loadingBufferSize = 1_000
            configuration.eventHandler = events.handler
        }
    }

    /// What one user heard.
    struct Outcome: Sendable {
        let objects: [Data]
        let origins: [DataOrigin]
        let errors: [ManagedCacheError]
        let finalCallbackCount: Int
    }

    /// Manages one new user per path and returns what each heard once all have an outcome. The
    /// users are released on return, so the next round's users find no live handler holding
    /// the objects and go to the caches.
    static func load(_ paths: [String], from server: LoopbackServer, with manager: ObjectManager) async -> [String: Outcome] {
        var users: [String: RecordingUser<DataDecoder>] = [:]
        for path in paths {
            let user = RecordingUser(ObjectRequest(url: server.url(path)), decoder: DataDecoder())
            users[path] = user
            manager.manage(user)
        }
        let all = Array(users.values)
        _ = await waitUntil { all.allSatisfy { $0.finalCallbackCount >= 1 } }
        return users.mapValues {
            Outcome(objects: $0.objects, origins: $0.origins, errors: $0.errors, finalCallbackCount: $0.finalCallbackCount)
        }
    }

    /// Whether every file's status last changed more than 0.2 s ago (the cache only remembers a
    /// verification once a file's timestamps are older than the file system's clock tick).
    static func settled(_ files: [URL]) -> Bool {
        let now = Date().timeIntervalSince1970
        return files.allSatisfy { file in
            var info = stat()
            guard stat(file.path, &info) == 0 else { return false }
            #if canImport(Darwin)
            let changed = Double(info.st_ctimespec.tv_sec) + Double(info.st_ctimespec.tv_nsec) / 1e9
            #else
            let changed = Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9
            #endif
            return now - changed > 0.2
        }
    }

    static func size(of path: String) -> Int { Int(path.split(separator: "/")[1]) ?? 0 }

    static func damage(_ file: URL, _ damage: Damage, donor: URL) throws {
        var bytes = try Data(contentsOf: file)
        switch damage {
        case .firstByteFlipped: bytes[0] ^= 0x01
        case .middleByteFlipped: bytes[bytes.count / 2] ^= 0x80
        case .lastByteFlipped: bytes[bytes.count - 1] ^= 0x10
        case .truncatedToHalf: bytes = bytes.prefix(bytes.count / 2)
        case .truncatedToZero: bytes = Data()
        case .oneByteAppended: bytes.append(0)
        case .deleted:
            try FileManager.default.removeItem(at: file)
            return
        case .zeroFilled: bytes = Data(count: bytes.count)
        case .replacedByAnotherEntrysFile: bytes = try Data(contentsOf: donor)
        }
        // In place, as bit rot or another program would: same inode, new contents.
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    @Test func damagedEntriesAreDetectedNeverDeliveredAndReloadedOnce() async throws {
        let tally = ReliabilityTally(item: "corruption")
        for figure in [
            "damaged entries", "detected", "damaged bytes delivered", "reloaded from the network", "index damages",
            "keys reloaded after index damage",
        ] {
            tally.add(0, to: figure)
        }
        await withTaskGroup(of: Void.self) { group in
            for kind in CacheKind.allCases {
                group.addTask { await Self.damageEntries(kind, tally: tally) }
                for damage in JournalDamage.allCases {
                    group.addTask { await Self.damageJournal(damage, kind: kind, tally: tally) }
                }
            }
        }
        tally.report()
        #expect(tally.figure("damaged bytes delivered") == 0)
        #expect(tally.figure("detected") == tally.figure("damaged entries"))
        #expect(tally.failureCount == 0)
    }

    // MARK: Entry files

    private static func damageEntries(_ kind: CacheKind, tally: ReliabilityTally) async {
        let directory = TemporaryDirectory(prefix: "reliability-corruption")
        let setup = "\(kind.testDescription) setup"
        guard let server = try? makeServer(), let fileCache = try? kind.open(directory.url) else {
            tally.check(false, setup, "cannot start")
            return
        }
        defer { server.stop() }
        let events = EventLog()
        let manager = makeManager(fileCache, events: events)
        var victims: [String: Damage] = [:]
        var paths: [String] = []
        for damage in Damage.allCases {
            for size in sizes {
                let path = "/k/\(size)/\(damage.rawValue)"
                victims[path] = damage
                paths.append(path)
            }
        }
        let bystanders = sizes.flatMap { size in (0..<4).map { "/k/\(size)/bystander-\($0)" } }
        paths += bystanders

        // 1. Download everything, then read it all back from disk once (which also lets the
        //    cache remember the files as verified: damage must be caught even then).
        let first = await load(paths, from: server, with: manager)
        tally.check(first.values.allSatisfy { $0.origins == [.network] }, setup, "the first load did not come from the network")
        let entryFiles = paths.compactMap { fileCache.entry(forKey: server.url($0).absoluteString)?.fileURL }
        tally.check(entryFiles.count == paths.count, setup, "\(entryFiles.count) of \(paths.count) entries stored")
        let didSettle = await waitUntil { settled(entryFiles) }
        tally.check(didSettle, setup, "file timestamps did not settle")
        manager.removeAllObjects()
        let fromDisk = await load(paths, from: server, with: manager)
        tally.check(fromDisk.values.allSatisfy { $0.origins == [.fileCache] }, setup, "the second load did not come from disk")

        // 2. Damage the victims' files behind the cache's back.
        for (path, damage) in victims {
            let name = "\(kind.testDescription) \(damage.rawValue) \(size(of: path)) bytes"
            tally.addCase(name)
            guard let file = fileCache.entry(forKey: server.url(path).absoluteString)?.fileURL,
                let donor = fileCache.entry(forKey: server.url("/k/\(size(of: path))/bystander-0").absoluteString)?.fileURL
            else {
                tally.check(false, name, "no entry to damage")
                continue
            }
            do {
                try Self.damage(file, damage, donor: donor)
                tally.add(1, to: "damaged entries")
            } catch {
                tally.check(false, name, "could not damage the file: \(error)")
            }
        }

        // 3. Ask for everything again: damaged keys come from the network, once; the rest from disk.
        manager.removeAllObjects()
        let errorsBefore = manager.statistics.fileCacheErrors
        let third = await load(paths, from: server, with: manager)
        for path in paths {
            let damage = victims[path]
            let name = damage.map { "\(kind.testDescription) \($0.rawValue) \(size(of: path)) bytes" } ?? "\(kind.testDescription) \(path)"
            if damage == nil { tally.addCase(name) }
            let user = third[path]
            let delivered = user?.objects.first
            let right = body(path, size: size(of: path))
            tally.check(user?.finalCallbackCount == 1, name, "final callbacks: \(user?.finalCallbackCount ?? 0)")
            if let delivered, delivered != right {
                tally.add(1, to: "damaged bytes delivered")
                tally.check(false, name, "delivered \(delivered.count) wrong bytes")
            }
            tally.check(delivered == right, name, "not delivered: \(user?.errors ?? [])")
            if damage != nil {
                let detected = events.corruptEntries.contains(server.url(path).absoluteString)
                if detected { tally.add(1, to: "detected") }
                tally.check(detected, name, "the damage was not reported as a corrupt entry (events: \(events.all.count))")
                tally.check(user?.origins == [.network], name, "origin \(user?.origins ?? []), expected a reload")
                tally.check(server.requestCount(for: path) == 2, name, "\(server.requestCount(for: path)) requests, expected 2")
                if user?.origins == [.network] { tally.add(1, to: "reloaded from the network") }
            } else {
                tally.check(user?.origins == [.fileCache], name, "an undamaged entry came from \(user?.origins ?? [])")
                tally.check(server.requestCount(for: path) == 1, name, "an undamaged entry was downloaded again")
            }
        }
        tally.check(
            manager.statistics.fileCacheErrors - errorsBefore == victims.count, setup,
            "\(manager.statistics.fileCacheErrors - errorsBefore) file-cache errors counted for \(victims.count) damaged entries")

        // 4. The reloaded entries were stored again: everything now comes from disk, right.
        manager.removeAllObjects()
        let fourth = await load(paths, from: server, with: manager)
        tally.check(
            fourth.allSatisfy { path, user in user.origins == [.fileCache] && user.objects.first == body(path, size: size(of: path)) },
            setup, "after the reload not everything came back right from disk")
    }

    // MARK: The index

    /// Damages the journal while a manager uses the cache, keeps using it (lookups, new downloads,
    /// trims), then reopens the directory with a new cache and manager. Every key must always
    /// arrive right, from disk or reloaded from the network.
    private static func damageJournal(_ damage: JournalDamage, kind: CacheKind, tally: ReliabilityTally) async {
        let name = "\(kind.testDescription) journal \(damage.rawValue)"
        tally.addCase(name)
        tally.add(1, to: "index damages")
        let directory = TemporaryDirectory(prefix: "reliability-journal")
        guard let server = try? makeServer() else {
            tally.check(false, name, "cannot start the server")
            return
        }
        defer { server.stop() }
        let paths = (0..<24).map { "/k/\(sizes[$0 % 2])/journal-\($0)" }
        let later = (0..<8).map { "/k/\(sizes[$0 % 2])/later-\($0)" }
        do {
            guard let fileCache = try? kind.open(directory.url) else {
                tally.check(false, name, "cannot open the cache")
                return
            }
            let events = EventLog()
            let manager = makeManager(fileCache, events: events)
            let stored = await load(paths, from: server, with: manager)
            tally.check(stored.allSatisfy { $1.objects.first == body($0, size: size(of: $0)) }, name, "the first load failed")
            for path in paths.prefix(6) { fileCache.removeEntry(forKey: server.url(path).absoluteString) }  // removal records too

            let journal = directory.appending("journal")
            do {
                var contents = try Data(contentsOf: journal)
                switch damage {
                case .garbageAppended: contents.append(FramedBody.payload(seed: "garbage", count: 333))
                case .truncatedMidRecord: contents.removeLast(min(7, contents.count))
                case .byteFlippedInTheMiddle: contents[contents.count / 2] ^= 0x40
                case .replacedByGarbage: contents = FramedBody.payload(seed: "garbage", count: 5_000)
                case .deleted, .emptied: contents = Data()
                }
                if damage == .deleted {
                    try FileManager.default.removeItem(at: journal)
                } else {
                    let handle = try FileHandle(forWritingTo: journal)
                    try handle.truncate(atOffset: 0)
                    try handle.write(contentsOf: contents)
                    try handle.close()
                }
            } catch {
                tally.check(false, name, "could not damage the journal: \(error)")
                return
            }

            // The live manager keeps working on the damaged index.
            manager.removeAllObjects()
            let live = await load(paths + later, from: server, with: manager)
            for (path, user) in live {
                tally.check(
                    user.objects.first == body(path, size: size(of: path)), name,
                    "live, \(path): \(user.objects.first.map { "\($0.count) wrong bytes" } ?? "\(user.errors)")")
            }
            fileCache.trim()
        }

        // A new cache and manager on the same directory.
        guard let reopened = try? kind.open(directory.url) else {
            tally.check(false, name, "the damaged directory cannot be reopened")
            return
        }
        let events = EventLog()
        let manager = makeManager(reopened, events: events)
        let requestsBefore = server.totalRequestCount
        let again = await load(paths + later, from: server, with: manager)
        for (path, user) in again {
            tally.check(
                user.objects.first == body(path, size: size(of: path)), name,
                "reopened, \(path): \(user.objects.first.map { "\($0.count) wrong bytes" } ?? "\(user.errors)")")
            tally.check(user.origins == [.fileCache] || user.origins == [.network], name, "origin \(user.origins)")
        }
        tally.add(server.totalRequestCount - requestsBefore, to: "keys reloaded after index damage")
        let entries = reopened.entriesByRecency(limit: .max)
        for entry in entries {
            let data = try? reopened.readData(for: entry)
            let path = URL(string: entry.key)?.path ?? ""
            tally.check(data == body(path, size: size(of: path)), name, "entry \(path) reads back wrong after reopening")
        }
        tally.check(
            regularFiles(in: directory.url, under: "ready").count == entries.count, name,
            "ready/ holds \(regularFiles(in: directory.url, under: "ready").count) files for \(entries.count) entries")
        tally.check(regularFiles(in: directory.url, under: "loading").isEmpty, name, "files left in loading/")
    }
}
