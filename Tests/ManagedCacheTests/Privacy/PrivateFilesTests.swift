import Foundation
import TestSupport
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the package writes is readable by the app alone: every file it creates is `0600` and every
/// directory `0700` whatever the umask, and a directory the caller made keeps its mode.
///
/// The umask is process-wide, so the files are made by a child process (`PrivateFilesChild`)
/// under the umask given: `000` (a process that would leave everything world-writable) and `077`.
/// It runs both file caches through stores, partial downloads kept and resumed, trims that
/// evict, a reopening and `removeAll`, and makes `FileURLDecoder`'s temporary files (a copy of
/// bytes in memory and a download spooled to disk), reporting every mode after each phase.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct PrivateFilesTests {
    /// One line "M <mode> <d|f> <path>" of the child's report.
    struct Item {
        var mode: Int
        var isDirectory: Bool
        var path: String
    }

    /// Every phase's items, in the order reported.
    static func phases(_ lines: [String]) -> [(phase: String, items: [Item])] {
        var phases: [(phase: String, items: [Item])] = []
        for line in lines {
            if line.hasPrefix("P ") {
                phases.append((String(line.dropFirst(2)), []))
            } else if line.hasPrefix("M "), !phases.isEmpty {
                let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
                guard fields.count == 4, let mode = Int(fields[1], radix: 8) else { continue }
                phases[phases.count - 1].items.append(Item(mode: mode, isDirectory: fields[2] == "d", path: fields[3]))
            }
        }
        return phases
    }

    @Test(arguments: ["000", "077"]) func everyFileIsPrivateWhateverTheUmask(umask: String) throws {
        let work = TemporaryDirectory(prefix: "private-files-\(umask)")
        // Directories the caller made, with a mode the caches must not change.
        let callerMade = ["caller": 0o755, "tmp": 0o751]
        for (name, mode) in callerMade {
            let url = work.appending(name)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            #expect(chmod(url.path, mode_t(mode)) == 0)
        }
        let child = try runChild(
            named: "PrivateFilesChild", arguments: [umask, work.url.path],
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": work.appending("tmp").path]) { $1 })
        #expect(child.succeeded, "the child failed: \(child.lines.suffix(5))")
        #expect(child.lines.last == "DONE")
        let phases = Self.phases(child.lines)
        #expect(
            phases.map(\.phase) == [
                "single partial kept", "big partial kept", "stored, partial downloads, trims", "reopened", "after removeAll",
                "temporary files",
            ])

        for (phase, items) in phases {
            for item in items {
                if let mode = callerMade[item.path] {
                    #expect(
                        item.isDirectory && item.mode == mode,
                        "\(phase): the caller's \(item.path) changed to \(String(item.mode, radix: 8))")
                } else {
                    let expected = item.isDirectory ? 0o700 : 0o600
                    #expect(item.mode == expected, "\(phase): \(item.path) is \(String(item.mode, radix: 8)) under umask \(umask)")
                }
            }
        }

        // The report covered what it is about: each kind of file was there to be checked.
        func paths(_ phase: String) -> [String] { phases.first { $0.phase == phase }?.items.map(\.path) ?? [] }
        let stored = paths("stored, partial downloads, trims")
        for expected in ["caller/journal", "caller/lock", "made", "made/by/cache/big/journal"] {
            #expect(stored.contains(expected), "no \(expected) in \(stored)")
        }
        #expect(stored.contains { $0.hasPrefix("caller/ready/") }, "no entry of the FileCache")
        #expect(
            stored.contains { $0.hasPrefix("made/by/cache/big/ready/") && $0.split(separator: "/").count == 7 }, "no BigFileCache entry")
        #expect(stored.contains { $0.hasPrefix("caller/sessions/") }, "no session file")
        for root in ["caller", "made/by/cache/big"] {
            #expect(stored.contains { $0.hasPrefix(root + "/partial/") && $0.hasSuffix(".part") }, "no partial download in \(root)")
            #expect(stored.contains { $0.hasPrefix(root + "/partial/") && $0.hasSuffix(".info") }, "no partial's info in \(root)")
        }
        #expect(paths("single partial kept").contains { $0.hasPrefix("caller/partial/") })
        #expect(paths("after removeAll").contains { $0.hasPrefix("caller/ready/") }, "ready/ was not recreated")
        let temporary = paths("temporary files").filter { $0.hasPrefix("tmp/ManagedCache-files-") }
        let names = try #require(child.value("T")?.split(separator: " ").map(String.init))
        for name in names {
            #expect(temporary.contains { $0.hasSuffix("/" + name) }, "the temporary file \(name) is not in \(temporary)")
        }
    }

    /// A cache an earlier version made (`0755` directories, a `0644` journal and entries) is
    /// narrowed whole when it is opened: every directory of its own (each bucket directory of a
    /// `BigFileCache` too) becomes `0700`, and its journal, lookup table and lock files `0600`,
    /// so no entry is within another account's reach; the caller's root keeps its mode.
    @Test(arguments: ["single", "big"]) func aCacheMadeWiderBeforeIsNarrowedAtOpening(kind: String) throws {
        let work = TemporaryDirectory(prefix: "private-narrowing")
        let root = work.appending("cache")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        #expect(chmod(root.path, 0o755) == 0)
        func open() throws -> any FileCaching {
            kind == "single" ? try FileCache(directory: root) : try BigFileCache(directory: root)
        }
        do {
            let cache = try open()
            _ = try cache.store(Data("entry".utf8), forKey: "key", metadata: FileCacheMetadata())
            // Entries in many bucket directories (a BigFileCache spreads 60 keys over about 50).
            for index in 0..<60 { _ = try cache.store(Data("\(index)".utf8), forKey: "key-\(index)", metadata: FileCacheMetadata()) }
            // An earlier version's lock file, which this one no longer creates.
            #expect(FileManager.default.createFile(atPath: root.appendingPathComponent("session.lock").path, contents: Data()))
            let writer = try cache.makeWriter(forKey: "partial")
            try writer.write(Data("part".utf8))
            writer.suspend(validator: "\"v\"")
        }
        // What an earlier version left: every directory 0755, every file 0644.
        let items = FileManager.default.subpaths(atPath: root.path) ?? []
        for item in items {
            let path = root.appendingPathComponent(item).path
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            #expect(chmod(path, isDirectory.boolValue ? 0o755 : 0o644) == 0)
        }
        let directories = items.filter { item in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root.appendingPathComponent(item).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }
        #expect(directories.count > (kind == "big" ? 40 : 3))
        let reopened = try open()
        // Narrowed by the time the initializer returns, not by a later step.
        for directory in directories {
            #expect(try mode(of: root.appendingPathComponent(directory).path) == 0o700, "\(directory)")
        }
        for file in ["journal", "journal.lookup", "lock", "session.lock"] {
            #expect(try mode(of: root.appendingPathComponent(file).path) == 0o600, "\(file)")
        }
        #expect(reopened.entry(forKey: "key") != nil)
        #expect(try mode(of: root.path) == 0o755)
        withExtendedLifetime(reopened) {}
    }

    /// An existing folder of this user for the temporary files, left wider by an earlier version,
    /// is narrowed to `0700`; a symbolic link or a file in its place is refused.
    @Test func theTemporaryFolderIsThisUsersAndPrivate() throws {
        let work = TemporaryDirectory(prefix: "private-temporary")
        let folder = work.appending("ManagedCache-files-test").path
        #expect(mkdir(folder, 0o755) == 0)
        #expect(chmod(folder, 0o755) == 0)
        #expect(PrivateFiles.prepareOwnDirectory(folder) == 0)
        #expect(try mode(of: folder) == 0o700)

        let link = work.appending("link").path
        #expect(symlink(folder, link) == 0)
        #expect(PrivateFiles.prepareOwnDirectory(link) == ENOTDIR)
        let file = work.appending("file").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(PrivateFiles.prepareOwnDirectory(file) == ENOTDIR)

        let made = work.appending("new/and/nested").path
        #expect(PrivateFiles.prepareOwnDirectory(made) == 0)
        #expect(try mode(of: made) == 0o700)
        #expect(try mode(of: work.appending("new").path) == 0o700)
    }

    /// `FileURLDecoder`'s folder is this user's (its name carries the user id), private, and its
    /// copies are private files.
    @Test func fileURLDecoderCopiesArePrivate() throws {
        let file = try FileURLDecoder().decode(LoadedData(data: Data("private".utf8), origin: .network))
        #expect(file.url.deletingLastPathComponent().lastPathComponent.hasPrefix("ManagedCache-files-\(geteuid())"))
        #expect(try mode(of: file.url.path) == 0o600)
        #expect(try mode(of: TemporaryFiles.directory.path) == 0o700)
        #expect(try Data(contentsOf: file.url) == Data("private".utf8))
    }

    /// The protection class is the configuration's, passed down to where the directories are made;
    /// the default is "complete until first user authentication" (applied on Apple platforms only).
    @Test func theProtectionClassReachesTheLayout() throws {
        let directory = TemporaryDirectory(prefix: "private-protection")
        let defaults = try FileCache(directory: directory.appending("default"))
        #expect(defaults.configuration.fileProtection == .completeUntilFirstUserAuthentication)
        #expect(defaults.store.layout.protection == .completeUntilFirstUserAuthentication)
        let strict = try BigFileCache(directory: directory.appending("strict"), configuration: .init(fileProtection: .complete))
        #expect(strict.store.layout.protection == .complete)
        #expect(
            FileProtection.completeUntilFirstUserAuthentication.foundationType?.rawValue
                == FileProtectionType.completeUntilFirstUserAuthentication.rawValue)
        #expect(FileProtection.unprotected.foundationType?.rawValue == FileProtectionType.none.rawValue)
        #expect(FileProtection.inherited.foundationType?.rawValue == nil)
    }

    func mode(of path: String) throws -> Int {
        var info = stat()
        try #require(lstat(path, &info) == 0)
        return Int(info.st_mode & 0o7777)
    }
}
