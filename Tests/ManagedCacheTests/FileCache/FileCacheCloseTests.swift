import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// `close()` writes what the cache kept in memory, releases its files and makes every later call
/// fail with `FileCacheError.closed`; a manager using a closed cache goes on without it.
@Suite struct FileCacheCloseTests {
    private func open(_ kind: String, _ root: URL) throws -> JournaledFileCache {
        kind == "single" ? try FileCache(directory: root) : try BigFileCache(directory: root)
    }

    /// Closing writes the hits kept in memory (the next opening has their order), deletes the
    /// session file, and closes every file of the directory.
    @Test(arguments: ["single", "big"]) func closingWritesRecencyAndReleasesEveryFile(kind: String) throws {
        try withTemporaryDirectory { root in
            let cache = try open(kind, root)
            for key in ["a", "b", "c"] { try cache.store(Data(key.utf8), forKey: key) }
            #expect(cache.entry(forKey: "a") != nil)  // a hit kept in memory: "a" is now the most recent
            #expect(OpenDescriptors.under(root).map { $0 > 0 } ?? true)
            cache.close()
            if let open = OpenDescriptors.under(root) { #expect(open == 0) }
            let sessions = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("sessions").path)
            #expect(sessions.isEmpty)

            let reopened = try open(kind, root)
            #expect(reopened.entriesByRecency(limit: 3).map(\.key) == ["a", "c", "b"])
            withExtendedLifetime(cache) {}
        }
    }

    /// After `close()` every throwing call throws `closed`, lookups find nothing, statistics are
    /// zero, and removals and trims leave the files alone: a new instance finds every entry.
    @Test(arguments: ["single", "big"]) func everyCallAfterClosingFailsWithClosed(kind: String) throws {
        try withTemporaryDirectory { root in
            let cache = try open(kind, root)
            let entry = try cache.store(Data("kept".utf8), forKey: "kept", pinned: false)
            try cache.store(Data("other".utf8), forKey: "other")
            let writer = try cache.makeWriter(forKey: "late")
            try writer.write(Data("late bytes".utf8))
            cache.close()

            #expect(cache.entry(forKey: "kept") == nil)
            #expect(cache.statistics == FileCacheStatistics(count: 0, totalBytes: 0))
            #expect(cache.entriesByRecency(limit: 10).isEmpty)
            #expect(cache.pinnedEntries().isEmpty)
            #expect(throws: FileCacheError.closed) { try cache.readData(for: entry) }
            #expect(throws: FileCacheError.closed) { try cache.verify(entry) }
            #expect(throws: FileCacheError.closed) { try cache.store(Data("x".utf8), forKey: "x") }
            #expect(throws: FileCacheError.closed) { try cache.makeWriter(forKey: "y") }
            #expect(throws: FileCacheError.closed) { try cache.pin(forKey: "kept") }
            #expect(throws: FileCacheError.closed) { try cache.unpin(forKey: "kept") }
            #expect(throws: FileCacheError.closed) { try cache.updateMetadata(FileCacheMetadata(), forKey: "kept") }
            #expect(throws: FileCacheError.closed) { try cache.removeEntryReportingFailure(forKey: "kept") }
            #expect(throws: FileCacheError.closed) { try cache.removeAllReportingFailure() }
            #expect(throws: FileCacheError.closed) { try cache.flush() }
            #expect(throws: FileCacheError.closed) { try writer.commit(metadata: FileCacheMetadata()) }
            cache.removeEntry(forKey: "kept")
            cache.removeAll()
            cache.trim()
            cache.close()  // a second close does nothing
            let loading = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("loading").path)
            #expect(loading.isEmpty, "the writer's file is left: \(loading)")

            let reopened = try open(kind, root)
            #expect(try reopened.entry(forKey: "kept").map { try reopened.readData(for: $0) } == Data("kept".utf8))
            #expect(reopened.entry(forKey: "other") != nil)
            #expect(reopened.entry(forKey: "late") == nil)
        }
    }

    /// A cache closed while its opening still replays the journal closes at once and writes
    /// nothing wrong: the next opening finds every entry.
    @Test func closingDuringTheOpeningReplay() throws {
        try withTemporaryDirectory { root in
            do {
                let cache = try BigFileCache(directory: root)
                for index in 0..<200 { try cache.store(Data("\(index)".utf8), forKey: "key-\(index)") }
            }
            let cache = try BigFileCache(directory: root, configuration: .init(), clock: { Date() }, replaysInBackground: false)
            #expect(cache.store.isOpening)
            cache.close()
            #expect(cache.entry(forKey: "key-1") == nil)
            let reopened = try BigFileCache(directory: root)
            #expect(reopened.statistics.count == 200)
        }
    }

    /// A manager whose file cache was closed loads from the network, reports each refusal as a
    /// `fileCacheFailure` with `closed`, and leaves nobody waiting.
    @Test func aManagerUsingAClosedCacheGoesOnWithoutIt() async throws {
        try await withTemporaryDirectory { root in
            let cache = try FileCache(directory: root)
            cache.close()
            let loader = ScriptedDataLoader()
            loader.script("a", .body(Data("some bytes".utf8)))
            let events = EventLog()
            let manager = makeScriptedManager(loader: loader) {
                $0.fileCache = cache
                $0.eventHandler = events.handler
            }
            let user = RecordingUser(request("a"), decoder: BlobDecoder())
            manager.manage(user)
            #expect(await waitUntil { user.finalCallbackCount == 1 })
            #expect(user.objects.map(\.text) == ["some bytes"])
            let errors = events.all.compactMap { event -> FileCacheError? in
                if case .fileCacheFailure(_, _, let error) = event { return error }
                return nil
            }
            #expect(!errors.isEmpty)
            #expect(errors.allSatisfy { $0 == .closed })
        }
    }

    /// The protocol's default `close()` does nothing: a custom cache keeps working.
    @Test func theDefaultCloseOfACustomCacheDoesNothing() throws {
        try withTemporaryDirectory { root in
            let cache = SimpleFileCache(directory: root)
            try cache.store(Data("x".utf8), forKey: "x", metadata: FileCacheMetadata())
            cache.close()
            #expect(cache.entry(forKey: "x") != nil)
        }
    }
}
