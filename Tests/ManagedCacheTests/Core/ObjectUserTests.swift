import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

@Suite struct ObjectUserTests {
    @Test func trailingClosureReceivesTheObjectAndPhaseFollows() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let received = Lock<[String]>([])
        let user = ObjectUser(request: request("a"), decoder: BlobDecoder()) { blob, origin in
            received.withLock { $0.append("\(blob.text) \(origin)") }
        }
        if case .idle = user.phase {} else { Issue.record("a new user is idle") }
        manager.manage(user)
        // The phase changes before the closure runs: wait for both.
        #expect(await waitUntil { user.object != nil && !received.withLock { $0.isEmpty } })
        #expect(received.withLock { $0 } == ["A network"])
        if case .ready(_, .network) = user.phase {} else { Issue.record("expected ready, got \(user.phase)") }
    }

    @Test func callbacksForAnOldRequestAreDropped() async {
        let loader = ScriptedDataLoader()
        loader.script("old", .held(firstChunk: Data("o".utf8), rest: Data()))
        loader.script("new", .body(Data("N".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let user = ObjectUser(request: request("old"), decoder: BlobDecoder())
        manager.manage(user)
        user.request = request("new")
        // Delivered for "old" directly (as a late callback would be): ignored.
        user.managedObjectReady(Blob(Data("stale".utf8)), origin: .network, request: request("old"))
        #expect(user.object == nil)
        manager.manage(user)
        #expect(await waitUntil { user.object?.text == "N" })
        loader.release("old")
        #expect(await waitUntil { manager.activeLoadCount == 0 })
        #expect(user.object?.text == "N")
    }

    @Test func failureIsKeptAsThePhase() async {
        let loader = ScriptedDataLoader()
        let manager = makeScriptedManager(loader: loader)
        let failures = Counter()
        let user = ObjectUser(request: request("none"), decoder: BlobDecoder(), onFailure: { _ in failures.increment() })
        manager.manage(user)
        #expect(await waitUntil { failures.count == 1 })
        if case .failed(.httpStatus(code: 404)) = user.phase {} else { Issue.record("expected failed(404), got \(user.phase)") }
    }
}
