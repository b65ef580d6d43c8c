import ChildProcesses
import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// `FileURLDecoder` without a file cache writes temporary files; they are deleted
/// when their object is released, and those of processes that ended are deleted by the next.
@Suite(.offCooperativePool) struct FileURLDecoderTests {
    @Test func aTemporaryFileIsDeletedWhenItsObjectIsReleased() async throws {
        let loader = ScriptedDataLoader()
        loader.script("doc", .body(Data("a large document".utf8)))
        var manager: ObjectManager? = makeScriptedManager(loader: loader)
        var file: DecodedFile? = try await manager?.object(for: request("doc"), decoder: FileURLDecoder())
        let url = try #require(file?.url)
        #expect(file?.isTemporary == true)
        #expect(url.deletingLastPathComponent().standardizedFileURL == TemporaryFiles.directory.standardizedFileURL)
        #expect(try Data(contentsOf: url) == Data("a large document".utf8))
        let released = WeakBox(file)
        file = nil
        #expect(FileManager.default.fileExists(atPath: url.path))  // the memory cache still holds it
        manager = nil
        // The load's task may hold the manager a moment longer.
        #expect(await waitUntil { released.isGone })
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test func aFileCacheEntryIsHandedOverAndNeverDeleted() async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        loader.script("doc", .body(Data("cached".utf8)))
        var manager: ObjectManager? = makeScriptedManager(loader: loader) { $0.fileCache = try? FileCache(directory: directory.url) }
        var file: DecodedFile? = try await manager?.object(for: request("doc"), decoder: FileURLDecoder())
        let url = try #require(file?.url)
        #expect(file?.isTemporary == false)
        #expect(url.path.hasPrefix(directory.url.path))
        let released = WeakBox(file)
        file = nil
        manager = nil
        #expect(await waitUntil { released.isGone })
        #expect(FileManager.default.fileExists(atPath: url.path))
    }

    /// It starts a child process: never beside the file-cache tests that must be alone (see `ChildProcessGate`).
    @Test(.spawnsChildProcesses) func filesOfEndedProcessesAreDeletedOthersKept() throws {
        _ = try TemporaryFiles.makeURL()  // the directory exists
        let ended = try SpawnedProcess(executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exit 0"])
        ended.waitUntilExit()
        let orphan = TemporaryFiles.directory.appendingPathComponent("\(ended.processIdentifier)-\(UUID().uuidString)")
        let mine = TemporaryFiles.directory.appendingPathComponent("\(getpid())-\(UUID().uuidString)")
        let stranger = TemporaryFiles.directory.appendingPathComponent("not-a-pid-\(UUID().uuidString)")
        for url in [orphan, mine, stranger] { try Data("x".utf8).write(to: url) }
        defer { for url in [mine, stranger] { try? FileManager.default.removeItem(at: url) } }
        TemporaryFiles.removeFilesOfEndedProcesses()
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
        #expect(FileManager.default.fileExists(atPath: mine.path))
        #expect(FileManager.default.fileExists(atPath: stranger.path))
    }
}
