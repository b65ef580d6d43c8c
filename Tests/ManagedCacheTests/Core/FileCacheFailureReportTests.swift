import Foundation
import ManagedCache
import Testing
import TestSupport

/// A file cache that fails is reported to the event handler, naming the key it failed for, and
/// the load goes on without it.
@Suite struct FileCacheFailureReportTests {
    @Test func aFailedWriteIsReportedWithTheKeyItWasFor() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("some bytes".utf8)))
        let directory = TemporaryDirectory()
        let cache = FaultyFileCache(wrapping: SimpleFileCache(directory: directory.url))
        cache.fault = .full(remainingBytes: 1)  // a writer can start, its first write fails
        let events = EventLog()
        let manager = makeScriptedManager(loader: loader) {
            $0.fileCache = cache
            $0.eventHandler = events.handler
        }
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        #expect(user.objects.map(\.text) == ["some bytes"])
        #expect(events.fileCacheFailures == ["write"])
        #expect(events.all.allSatisfy { event in
            if case .fileCacheFailure(let key, _, _) = event { return key == request("a").dataKey }
            return true
        })
        #expect(manager.statistics.fileCacheErrors == 1)
    }
}
