import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import ManagedCache

/// Without a file cache, a body past `inMemoryThreshold` goes to a temporary file instead of
/// memory (a 200 MiB download must not be held in memory): decoders get it back whole, mapped; a decoder that wants a file
/// gets the file itself (`FileURLDecoder` keeps it as long as its `DecodedFile`); the file is
/// deleted once nothing keeps it, and when the download is cancelled or fails.
@Suite(.offCooperativePool) struct DownloadSpoolTests {
    static let threshold = 64 << 10

    /// A manager without a file cache that spools bodies past 64 KiB.
    private func makeManager() -> ObjectManager {
        makeNetworkManager { $0.inMemoryThreshold = Self.threshold }
    }

    /// Temporary files that start like `body`: those of this test's download (every body here
    /// starts with bytes of its own seed).
    static func spoolFiles(of body: Data) -> [URL] {
        let directory = TemporaryFiles.directory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.map { directory.appendingPathComponent($0) }.filter { url in
            guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
            defer { try? handle.close() }
            return (try? handle.read(upToCount: 64)) == body.prefix(64)
        }
    }

    /// Keeps the bytes, and notes whether they were in a temporary file while it decoded.
    struct ProbeDecoder: ObjectDecoding {
        let body: Data
        let spooled: Counter
        let fileURLs: Counter

        func decode(_ data: LoadedData) throws -> Data {
            if !DownloadSpoolTests.spoolFiles(of: body).isEmpty { spooled.increment() }
            if data.fileURL != nil { fileURLs.increment() }
            return try data.bytes()
        }
    }

    /// Wants a file; returns the bytes of the file it was given (nil when it was given bytes in memory).
    struct FileProbeDecoder: ObjectDecoding {
        var identifier: String { "file-probe" }
        var prefersFileURL: Bool { true }
        func decode(_ data: LoadedData) throws -> Data? { try data.fileURL.map { try Data(contentsOf: $0) } }
    }

    @Test(arguments: [true, false])
    func aLargeBodyComesBackWholeAndItsTemporaryFileIsDeleted(announcesLength: Bool) async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("spool-\(announcesLength)-\(UUID())", count: 1_000_003)
        var response = LoopbackResponse.ok(body)
        if !announcesLength {
            // No Content-Length: the body ends when the connection closes, and the spool is opened
            // when the body outgrows the threshold.
            response = response.behaving(.truncate(afterBodyBytes: body.count, sendContentLength: false))
        }
        server.setRoute("/large", response)
        let manager = makeManager()
        let decoder = ProbeDecoder(body: body, spooled: Counter(), fileURLs: Counter())
        let bytes = try await manager.object(for: ObjectRequest(url: server.url("/large")), decoder: decoder)
        #expect(bytes == body)
        #expect(decoder.spooled.count == 1)
        #expect(decoder.fileURLs.count == 0)
        #expect(await waitUntil { Self.spoolFiles(of: body).isEmpty })
    }

    @Test func aDecoderThatWantsAFileGetsTheTemporaryFileUntilItsObjectGoes() async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("spool-file-\(UUID())", count: 500_000)
        server.setRoute("/document.pdf", .ok(body))
        var manager: ObjectManager? = makeManager()
        var file: DecodedFile? = try await manager?.object(for: ObjectRequest(url: server.url("/document.pdf")), decoder: FileURLDecoder())
        let url = try #require(file?.url)
        #expect(file?.isTemporary == true)
        #expect(try Data(contentsOf: url) == body)
        #expect(Self.spoolFiles(of: body).map(\.lastPathComponent) == [url.lastPathComponent], "the file the download streamed into")
        // The decoder was handed that file, not bytes in memory.
        let probed = fixtureBody("spool-probe-\(UUID())", count: 300_000)
        server.setRoute("/probe.pdf", .ok(probed))
        let given = try await manager?.object(for: ObjectRequest(url: server.url("/probe.pdf")), decoder: FileProbeDecoder())
        #expect(given == probed)
        #expect(await waitUntil { Self.spoolFiles(of: probed).isEmpty }, "deleted once decoded: nothing kept it")
        // The document's file goes with the last reference to its object (here and in memory).
        manager = nil
        #expect(FileManager.default.fileExists(atPath: url.path))
        file = nil
        #expect(await waitUntil { !FileManager.default.fileExists(atPath: url.path) })
    }

    @Test func aCancelledDownloadLeavesNoTemporaryFile() async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("spool-cancel-\(UUID())", count: 1_000_000)
        // The first 300,000 bytes, then nothing until the test lets the rest go.
        let gate = BodyGate(breaks: [300_000])
        defer { gate.releaseAll() }
        server.setRoute("/slow", .ok(body).behaving(.gated(gate)))
        let manager = makeManager()
        let spooling = Counter()
        let task = Task {
            try await manager.object(for: ObjectRequest(url: server.url("/slow")), decoder: DataDecoder()) { progress in
                if progress.receivedBytes > 2 * Self.threshold { spooling.increment() }
            }
        }
        #expect(await waitUntil { spooling.count > 0 })
        #expect(!Self.spoolFiles(of: body).isEmpty)
        task.cancel()
        await #expect(throws: ManagedCacheError.cancelled(.caller)) { try await task.value }
        #expect(await waitUntil { Self.spoolFiles(of: body).isEmpty })
    }
}
