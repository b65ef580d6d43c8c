import Foundation
import ManagedCache
import TestSupport
import Testing

/// Every callback promised on the main queue runs there, whichever thread called
/// `manage`: a background thread, the main actor, or a task.
@Suite struct MainQueueContractTests {
    enum Caller: String, CaseIterable, Sendable { case backgroundThread, mainActor, detachedTask }

    /// Calls `body` from `caller`, and returns once it has returned.
    private func call(from caller: Caller, _ body: @escaping @Sendable () -> Void) async {
        switch caller {
        case .backgroundThread:
            onManagingThread(body)
        case .mainActor:
            await MainActor.run { body() }
        case .detachedTask:
            await Task.detached { body() }.value
        }
    }

    /// A manager whose memory cache holds "hit", and a loader that answers "miss" and fails "bad".
    private func makeManager() async throws -> ObjectManager {
        let loader = ScriptedDataLoader()
        loader.script("hit", .body(Data("hit".utf8)))
        loader.script("miss", .body(Data("miss".utf8)))
        loader.script("bad", .failure(.httpStatus(code: 404)))
        let manager = makeScriptedManager(loader: loader)
        _ = try await manager.object(for: request("hit"), decoder: BlobDecoder())
        return manager
    }

    @Test(arguments: Caller.allCases)
    func aMainQueueUserIsCalledOnTheMainQueueOnly(from caller: Caller) async throws {
        let manager = try await makeManager()
        let users = ["hit", "miss", "bad"].map { RecordingUser(request($0), decoder: BlobDecoder(), delivery: .mainQueue) }
        let invalid = RecordingUser(ObjectRequest(url: URL(string: "gopher://host/x")!), decoder: BlobDecoder(), delivery: .mainQueue)
        let hitBeforeReturn = Counter()
        await call(from: caller) {
            for user in users + [invalid] { manager.manage(user) }
            if users[0].objects.count == 1 { hitBeforeReturn.increment() }
        }
        #expect(await waitUntil { users.allSatisfy { $0.finalCallbackCount == 1 } && invalid.finalCallbackCount == 1 })
        for user in users + [invalid] {
            #expect(user.callbacksOnMainQueue.allSatisfy { $0 }, "\(user.objectRequest!.url)")
        }
        #expect(users[0].origins == [.memory])
        #expect(users[1].objects.first?.text == "miss")
        #expect(users[2].errors == [.httpStatus(code: 404)])
        // On the main actor the hit is there before `manage` returns (elsewhere it goes to the
        // main queue, which may or may not have run it by then).
        if caller == .mainActor { #expect(hitBeforeReturn.count == 1) }
    }

    @Test(arguments: Caller.allCases)
    func mainActorClosuresOfAnObjectUserRunOnTheMainActor(from caller: Caller) async throws {
        let manager = try await makeManager()
        let calls = Counter()
        let callsOnMain = Counter()
        let note: @MainActor @Sendable () -> Void = {
            calls.increment()
            if MainQueueMarker.isOnMainQueue { callsOnMain.increment() }
        }
        let users = ["hit", "miss", "bad"].map { path in
            ObjectUser.onMainActor(
                request: request(path), decoder: BlobDecoder(),
                onReady: { _, _ in note() }, onFailure: { _ in note() })
        }
        await call(from: caller) {
            for user in users { manager.manage(user) }
        }
        #expect(await waitUntil { calls.count == 3 })
        #expect(callsOnMain.count == 3)
        #expect(users[0].object?.text == "hit")
        #expect(users[1].object?.text == "miss")
    }

    /// A callback queued on the main queue is checked when it runs, not when it was decided: a
    /// user unmanaged or managed again meanwhile is not called with it (the check
    /// is made on the user's record, off the manager's lock).
    ///
    /// Off the cooperative pool: it waits, blocking, for its hold of the main queue to begin, and
    /// another test's hold ahead of it may wait on the pool (see `MainQueueHold`).
    @Test(.offCooperativePool) func aQueuedCallbackOfAnUnmanagedOrReManagedUserIsDropped() async throws {
        let manager = try await makeManager()
        let unmanaged = RecordingUser(request("hit"), decoder: BlobDecoder(), delivery: .mainQueue)
        let reManaged = RecordingUser(request("hit"), decoder: BlobDecoder(), delivery: .mainQueue)
        let kept = RecordingUser(request("hit"), decoder: BlobDecoder(), delivery: .mainQueue)
        // Hold the main queue, so the three memory hits wait on it while the users change.
        let hold = MainQueueHold()
        #expect(hold.waitUntilHolding(), "the main queue did not begin the hold")
        onManagingThread {
            for user in [unmanaged, reManaged, kept] { manager.manage(user) }
            manager.unmanage(unmanaged)
            reManaged.setRequest(request("miss"))
            manager.manage(reManaged)
        }
        hold.release()
        #expect(!hold.outlastedItsBound, "the main queue was not held while the users changed")
        #expect(await waitUntil { kept.objects.count == 1 && reManaged.objects.count == 1 })
        await MainActor.run {}  // the main queue has run everything queued before this
        #expect(unmanaged.finalCallbackCount == 0)
        #expect(reManaged.objects.map(\.text) == ["miss"])
        #expect(kept.origins == [.memory])
    }
}
