import Foundation
import LoopbackServer
import ManagedCache
import TestSupport
import Testing

/// A file-cache entry whose file disappears between the cache's lookup and the decode (another
/// instance of the cache on the same directory removed it) is a miss: the key is downloaded
/// again, never failed with the decoder's "no such file" (`CorruptionTests` met it once under
/// AddressSanitizer, a journal damaged while two instances shared the directory).
@Suite(.offCooperativePool) struct VanishedEntryTests {
    /// Wants files, and removes the file-cache file it is given the first time, before reading
    /// it: the removal lands exactly between the lookup and the read.
    struct VanishingFileDecoder: ObjectDecoding {
        let removals = Counter()
        var prefersFileURL: Bool { true }
        func decode(_ data: LoadedData) throws -> Data {
            if data.origin == .fileCache, let url = data.fileURL, removals.count == 0 {
                removals.increment()
                try FileManager.default.removeItem(at: url)
            }
            return try data.bytes()
        }
    }

    /// Read by the load in the background, or inside `manage` (synchronous file-cache delivery).
    @Test(arguments: [false, true])
    func anEntryRemovedBeforeItsDecodeIsDownloadedAgain(readInManage: Bool) async throws {
        let server = try LoopbackServer()
        let body = fixtureBody("vanishing", count: 50_000)
        server.setRoute("/v", .ok(body))
        let directory = TemporaryDirectory(prefix: "vanished-entry")
        let url = server.url("/v")

        // 1. A first manager downloads the body into the file cache.
        let first = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        let downloader = RecordingUser(ObjectRequest(url: url), decoder: DataDecoder())
        first.manage(downloader)
        #expect(await waitUntil { downloader.objects == [body] })
        #expect(await waitUntil { first.fileCache?.statistics.count == 1 })

        // 2. A second manager finds the entry; its file goes before the decoder reads it.
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache) {
            if readInManage {
                $0.policy.fileCacheDelivery = .synchronous
                $0.synchronousFileReadLimit = 1 << 20
            }
        }
        let decoder = VanishingFileDecoder()
        let user = RecordingUser(ObjectRequest(url: url), decoder: decoder)
        manager.manage(user)
        #expect(await waitUntil { user.objects.count + user.errors.count == 1 })
        #expect(decoder.removals.count == 1, "the decoder was given the cached file")
        #expect(user.errors.isEmpty)
        #expect(user.objects == [body])
        #expect(user.origins == [.network])
        #expect(server.requestCount(for: "/v") == 2)
        // The new download is the entry now, and reads back whole.
        #expect(await waitUntil { fileCache.entry(forKey: ObjectRequest(url: url).dataKey) != nil })
        let entry = try #require(fileCache.entry(forKey: ObjectRequest(url: url).dataKey))
        #expect(try fileCache.readData(for: entry) == body)
    }
}
