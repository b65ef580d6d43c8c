import Foundation
import ManagedCache
import TestSupport
import Testing

@Suite struct UserLifecycleTests {
    @Test func reusedUserNeverReceivesTheOldObject() async {
        let loader = ScriptedDataLoader()
        loader.script("old", .held(firstChunk: Data("ol".utf8), rest: Data("d".utf8)))
        loader.script("new", .body(Data("new".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let other = RecordingUser(request("old"), decoder: BlobDecoder())
        let cell = RecordingUser(request("old"), decoder: BlobDecoder())
        manager.manage(other)
        manager.manage(cell)
        cell.setRequest(request("new"))
        manager.manage(cell)
        #expect(await waitUntil { cell.objects.count == 1 })
        loader.release("old")
        #expect(await waitUntil { other.objects.count == 1 })
        #expect(cell.objects.map(\.text) == ["new"])
        #expect(cell.readyRequests.allSatisfy { $0.url == ScriptedDataLoader.url("new") })
    }

    @Test func deallocatedUserGetsNothingAndTheLoadFinishesIntoTheCache() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("x".utf8), rest: Data("y".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let decodes = Counter()
        let released = WeakBox<RecordingUser<BlobDecoder>>(nil)
        do {
            let user = RecordingUser(request("a"), decoder: BlobDecoder(decodes: decodes))
            released.object = user
            manager.manage(user)
        }
        // A progress callback in flight on the loading thread may hold the user for a moment.
        #expect(await waitUntil { released.isGone })
        loader.release("a")
        #expect(await waitUntil { decodes.count == 1 })
        #expect(await waitUntil { manager.memoryCache.count == 1 })
        #expect(manager.activeLoadCount == 0)
    }

    @Test func loadWithoutUsersIsCancelledWhenThePolicySaysSo() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("x".utf8), rest: Data("y".utf8)))
        loader.script("b", .body(Data("b".utf8)))
        let manager = makeScriptedManager(loader: loader) { $0.policy.finishLoadingWithoutUsers = false }
        do {
            let user = RecordingUser(request("a"), decoder: BlobDecoder())
            manager.manage(user)
            #expect(await waitUntil { loader.activeCount("a") == 1 })
        }
        // The next manager activity notices the load nobody wants any more.
        let next = RecordingUser(request("b"), decoder: BlobDecoder())
        manager.manage(next)
        #expect(await waitUntil { loader.cancellationCount("a") == 1 })
        #expect(manager.statistics.loadsCancelled == 1)
        #expect(
            manager.memoryCache.contains(ObjectKey(dataKey: ScriptedDataLoader.url("a").absoluteString, variant: "test.blob.blob")) == false
        )
    }

    @Test func unmanageDetachesAndCancelsAnAbandonedLoadUnderTheCancelPolicy() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("x".utf8), rest: Data("y".utf8)))
        let manager = makeScriptedManager(loader: loader) { $0.policy.finishLoadingWithoutUsers = false }
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { loader.activeCount("a") == 1 })
        manager.unmanage(user)
        #expect(await waitUntil { loader.cancellationCount("a") == 1 })
        loader.release("a")
        #expect(user.finalCallbackCount == 0)
    }

    @Test func userWithoutRequestIsDetached() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("x".utf8), rest: Data("y".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        user.setRequest(nil)
        manager.manage(user)
        loader.release("a")
        #expect(await waitUntil { manager.activeLoadCount == 0 })
        #expect(user.objects.isEmpty)
    }
}
