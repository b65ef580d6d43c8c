import Foundation
import ManagedCache
import TestSupport
import Testing

@Suite struct AsyncTests {
    @Test func awaitReturnsTheSharedObject() async throws {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let first = try await manager.object(for: request("a"), decoder: BlobDecoder())
        let second = try await manager.object(for: request("a"), decoder: BlobDecoder())
        #expect(first === second)
        #expect(loader.requestCount("a") == 1)
    }

    @Test func awaitThrowsTheTypedError() async {
        let loader = ScriptedDataLoader()
        loader.script("gone", .failure(.httpStatus(code: 410)))
        let manager = makeScriptedManager(loader: loader)
        await #expect(throws: ManagedCacheError.httpStatus(code: 410)) {
            _ = try await manager.object(for: request("gone"), decoder: BlobDecoder())
        }
    }

    @Test func cancellingTheTaskCancelsTheLoad() async {
        let loader = ScriptedDataLoader()
        loader.script("slow", .held(firstChunk: Data("s".utf8), rest: Data("low".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let task = Task { try await manager.object(for: request("slow"), decoder: BlobDecoder()) }
        #expect(await waitUntil { loader.activeCount("slow") == 1 })
        task.cancel()
        let result = await task.result
        #expect(throws: ManagedCacheError.cancelled(.caller)) { try result.get() }
        #expect(await waitUntil { loader.cancellationCount("slow") == 1 })
    }

    @Test func progressIsReportedWhileLoading() async throws {
        let loader = ScriptedDataLoader()
        loader.script("p", .held(firstChunk: Data(repeating: 1, count: 10), rest: Data(repeating: 2, count: 30)))
        let manager = makeScriptedManager(loader: loader)
        let seen = Counter()
        let task = Task {
            try await manager.object(for: request("p"), decoder: BlobDecoder()) { progress in
                if progress.receivedBytes == 10, progress.expectedBytes == 40 { seen.increment() }
            }
        }
        #expect(await waitUntil { seen.count == 1 })
        loader.release("p")
        #expect(try await task.value.bytes.count == 40)
    }

    @Test func loadEventsStreamProgressThenTheObject() async throws {
        let loader = ScriptedDataLoader()
        loader.script("e", .body(Data(repeating: 7, count: 64)))
        let manager = makeScriptedManager(loader: loader)
        var sawProgress = false
        var object: Blob?
        for try await event in manager.loadEvents(for: request("e"), decoder: BlobDecoder()) {
            switch event {
            case .progress(let progress): sawProgress = sawProgress || progress.receivedBytes == 64
            case .object(let blob, let origin):
                object = blob
                #expect(origin == .network)
            }
        }
        #expect(sawProgress)
        #expect(object?.bytes.count == 64)
    }

    @Test func fileURLsLoadThroughTheSamePipeline() async throws {
        let directory = TemporaryDirectory()
        let file = directory.appending("note.txt")
        try Data("on disk".utf8).write(to: file)
        let manager = ObjectManager()
        let blob = try await manager.object(for: ObjectRequest(url: file), decoder: BlobDecoder())
        #expect(blob.text == "on disk")
    }
}
