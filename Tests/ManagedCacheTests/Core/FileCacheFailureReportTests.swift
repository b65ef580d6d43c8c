import Foundation
import ManagedCache
import TestSupport
import Testing

/// A file cache that fails is reported to the event handler, naming the key it failed for, and
/// the load goes on without it.
@Suite(.offCooperativePool) struct FileCacheFailureReportTests {
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
        #expect(
            events.all.allSatisfy { event in
                if case .fileCacheFailure(let key, _, _) = event { return key == request("a").dataKey }
                return true
            })
        #expect(manager.statistics.fileCacheErrors == 1)
    }

    @Test func theReportedErrorIsTypedWithItsErrno() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("some bytes".utf8)))
        let directory = TemporaryDirectory()
        let cache = FaultyFileCache(wrapping: SimpleFileCache(directory: directory.url))
        cache.fault = .full(remainingBytes: 0)  // no writer can even start
        let events = EventLog()
        let manager = makeScriptedManager(loader: loader) {
            $0.fileCache = cache
            $0.eventHandler = events.handler
        }
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        #expect(user.objects.map(\.text) == ["some bytes"])
        let errors = events.all.compactMap { event -> (FileCacheOperation, FileCacheError)? in
            if case .fileCacheFailure(_, let operation, let error) = event { return (operation, error) }
            return nil
        }
        #expect(errors.count == 1)
        #expect(errors.first?.0 == .create)
        #expect(errors.first?.1.errno == ENOSPC)
        #expect(errors.first?.1.isOutOfDescriptors == false)
    }

    @Test func anErrorOfAnotherTypeIsWrappedAsOther() {
        struct Custom: Error {}
        #expect(FileCacheError(Custom()) == .other(description: "Custom()"))
        let io = FileCacheError.io(operation: "open", errno: EMFILE)
        #expect(FileCacheError(io) == io)
        #expect(io.isOutOfDescriptors)
        #expect(FileCacheError.io(operation: "open", errno: ENFILE).isOutOfDescriptors)
        #expect(FileCacheError.writerClosed.errno == nil)
    }
}
