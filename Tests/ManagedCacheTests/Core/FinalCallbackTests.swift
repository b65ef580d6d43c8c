import Foundation
import ManagedCache
import TestSupport
import Testing

/// A user managed once for a request hears exactly one final callback (ready or failed) for it:
/// once told a load failed or was cancelled, it hears nothing more of that key until it is
/// managed again, whatever other users do with the key.
@Suite struct FinalCallbackTests {
    /// Found by the soak: `manage` looks the memory cache up before it takes the manager's lock,
    /// so the handler may be loading the key again by the time the hit is attached (here: a user
    /// whose freshness policy finds the object stale restarted the load). The hit answers its
    /// user; that user must not also hear the restarted load's cancellation.
    @Test func aMemoryHitOnAKeyWhoseLoadRestartedIsTheOnlyAnswer() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("v1".utf8)))
        let manager = makeScriptedManager(loader: loader, bufferSize: 1) { $0.policy.freshness = .fixed(seconds: 0) }
        let first = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.finalCallbackCount == 1 })
        manager.unmanage(first)

        // Stale under the manager's policy: this user restarts the load, held open.
        loader.script("a", .held(firstChunk: Data("v".utf8), rest: Data("2".utf8)))
        let restarting = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(restarting)
        #expect(await waitUntil { loader.activeCount("a") == 1 })
        // Never stale for this one: a memory hit while the key's load is under way.
        var lenient = request("a")
        lenient.policy.freshness = .neverRevalidate
        let hit = RecordingUser(lenient, decoder: BlobDecoder())
        manager.manage(hit)
        #expect(hit.origins == [.memory])

        // Another load pushes the restarted one out of the one-slot buffer.
        loader.script("b", .held(firstChunk: Data("b".utf8), rest: Data()))
        let other = RecordingUser(request("b"), decoder: BlobDecoder())
        manager.manage(other)
        #expect(await waitUntil { restarting.finalCallbackCount == 1 })
        #expect(restarting.errors == [.cancelled(.loadingBufferOverflow)])
        #expect(await waitUntil { loader.activeCount("a") == 0 })
        #expect(hit.finalCallbackCount == 1)
        #expect(hit.errors.isEmpty)
        loader.release("b")
        #expect(await waitUntil { other.finalCallbackCount == 1 })
    }

    @Test func aUserCancelledByTheBufferHearsNothingMoreWhenAnotherUserRestartsTheLoad() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("a".utf8), rest: Data("!".utf8)))
        loader.script("b", .held(firstChunk: Data("b".utf8), rest: Data("!".utf8)))
        let manager = makeScriptedManager(loader: loader, bufferSize: 1)
        let pushedOut = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(pushedOut)
        manager.manage(RecordingUser(request("b"), decoder: BlobDecoder()))
        #expect(pushedOut.errors == [.cancelled(.loadingBufferOverflow)])
        // Another user restarts "a" and gets it; the cancelled user's request is over.
        let restarter = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(restarter)
        loader.release("a")
        #expect(await waitUntil { restarter.objects.count == 1 })
        #expect(pushedOut.finalCallbackCount == 1)
        #expect(pushedOut.objects.isEmpty)
        // Managed again, it is a new request, and it gets the object.
        manager.manage(pushedOut)
        #expect(await waitUntil { pushedOut.objects.count == 1 })
        #expect(pushedOut.finalCallbackCount == 2)
    }

    @Test func aUserToldOfAFailureHearsNothingMoreWhenAnotherUserRetries() async {
        let loader = ScriptedDataLoader()
        loader.script("flaky", .failure(.httpStatus(code: 503)))
        let manager = makeScriptedManager(loader: loader)
        let first = RecordingUser(request("flaky"), decoder: BlobDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.errors == [.httpStatus(code: 503)] })
        loader.script("flaky", .body(Data("back".utf8)))
        let second = RecordingUser(request("flaky"), decoder: BlobDecoder())
        manager.manage(second)
        #expect(await waitUntil { second.objects.count == 1 })
        #expect(first.finalCallbackCount == 1)
        #expect(first.objects.isEmpty)
    }

    @Test func aUserToldTheKeyFailedRecentlyHearsNothingMoreWhenItIsLoadedLater() async {
        let loader = ScriptedDataLoader()
        loader.script("gone", .failure(.httpStatus(code: 404)))
        let manager = makeScriptedManager(loader: loader)
        let first = RecordingUser(request("gone"), decoder: BlobDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.finalCallbackCount == 1 })
        let told = RecordingUser(request("gone"), decoder: BlobDecoder())
        manager.manage(told)
        #expect(told.errors == [.recentlyFailed(.httpStatus(code: 404))])
        loader.script("gone", .body(Data("found".utf8)))
        manager.forgetFailure(for: request("gone"))
        let later = RecordingUser(request("gone"), decoder: BlobDecoder())
        manager.manage(later)
        #expect(await waitUntil { later.objects.count == 1 })
        #expect(told.finalCallbackCount == 1)
        #expect(first.finalCallbackCount == 1)
    }

    @Test func cancelAllTellsEachUserOnceEvenWhenItsKeyIsRestarted() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("a".utf8), rest: Data("!".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let users = (0..<3).map { _ in RecordingUser(request("a"), decoder: BlobDecoder()) }
        for user in users { manager.manage(user) }
        manager.cancelAll()
        #expect(users.allSatisfy { $0.errors == [.cancelled(.managerShutDown)] })
        let restarter = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(restarter)
        loader.release("a")
        #expect(await waitUntil { restarter.objects.count == 1 })
        #expect(users.allSatisfy { $0.finalCallbackCount == 1 })
    }
}
