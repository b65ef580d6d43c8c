import Foundation
import ManagedCache
import TestSupport
import Testing

@Suite struct LoadingBufferTests {
    @Test func oldestLoadIsCancelledAndItsUsersToldWhenTheBufferOverflows() async {
        let loader = ScriptedDataLoader()
        for path in ["1", "2", "3"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data("!".utf8))) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 2)
        let users = ["1", "2", "3"].map { RecordingUser(request($0), decoder: BlobDecoder()) }
        manager.manage(users[0])
        #expect(await waitUntil { loader.activeCount("1") == 1 })
        manager.manage(users[1])
        manager.manage(users[2])
        #expect(users[0].errors == [.cancelled(.loadingBufferOverflow)])
        #expect(await waitUntil { loader.cancellationCount("1") == 1 })
        #expect(manager.statistics.loadsCancelledByBuffer == 1)
        #expect(manager.bufferedLoadKeys.map(\.dataKey) == ["2", "3"].map { ScriptedDataLoader.url($0).absoluteString })
        // Managing the cancelled user again restarts its load.
        manager.manage(users[0])
        for path in ["1", "2", "3"] { loader.release(path) }
        #expect(await waitUntil { users[0].objects.count == 1 })
        #expect(loader.requestCount("1") == 2)
    }

    @Test func aUserJoiningALoadMakesItTheNewestInTheBuffer() async {
        // A cell that scrolls in and joins a load started long ago (a shared avatar) wants it now:
        // the load must not be the next one pushed out.
        let loader = ScriptedDataLoader()
        for path in ["shared", "2", "3"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data("!".utf8))) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 2)
        let early = RecordingUser(request("shared"), decoder: BlobDecoder())
        let second = RecordingUser(request("2"), decoder: BlobDecoder())
        let joining = RecordingUser(request("shared"), decoder: BlobDecoder())
        let third = RecordingUser(request("3"), decoder: BlobDecoder())
        manager.manage(early)
        manager.manage(second)
        manager.manage(joining)
        #expect(manager.bufferedLoadKeys.map(\.dataKey) == ["2", "shared"].map { ScriptedDataLoader.url($0).absoluteString })
        manager.manage(third)
        #expect(second.errors == [.cancelled(.loadingBufferOverflow)])
        #expect(joining.errors.isEmpty)
        #expect(early.errors.isEmpty)
        for path in ["shared", "3"] { loader.release(path) }
        #expect(await waitUntil { joining.objects.count == 1 && early.objects.count == 1 })
        #expect(loader.requestCount("shared") == 1)
    }

    @Test func shrinkingTheBufferCancelsTheLoadsThatNoLongerFit() async {
        let loader = ScriptedDataLoader()
        for path in ["1", "2", "3"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data())) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 3)
        let users = ["1", "2", "3"].map { RecordingUser(request($0), decoder: BlobDecoder()) }
        for user in users { manager.manage(user) }
        manager.loadingBufferSize = 1
        #expect(users[0].errors == [.cancelled(.loadingBufferOverflow)])
        #expect(users[1].errors == [.cancelled(.loadingBufferOverflow)])
        #expect(users[2].errors.isEmpty)
        #expect(manager.loadingBufferSize == 1)
    }

    @Test func asyncCallersAreNotPushedOutByTheBuffer() async throws {
        let loader = ScriptedDataLoader()
        for path in ["a", "1", "2"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data())) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 1)
        let awaited = Task { try await manager.object(for: request("a"), decoder: BlobDecoder()) }
        #expect(await waitUntil { loader.activeCount("a") == 1 })
        let users = ["1", "2"].map { RecordingUser(request($0), decoder: BlobDecoder()) }
        for user in users { manager.manage(user) }
        #expect(users[0].errors == [.cancelled(.loadingBufferOverflow)])
        loader.release("a")
        let blob = try await awaited.value
        #expect(blob.text == "a")
    }

    @Test func prefetchIsJoinedByALaterUserNotRestarted() async {
        let loader = ScriptedDataLoader()
        loader.script("p", .held(firstChunk: Data("pre".utf8), rest: Data("fetched".utf8)))
        let manager = makeScriptedManager(loader: loader)
        manager.prefetch([request("p")], decoder: BlobDecoder())
        #expect(await waitUntil { loader.activeCount("p") == 1 })
        let user = RecordingUser(request("p"), decoder: BlobDecoder())
        manager.manage(user)
        loader.release("p")
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects[0].text == "prefetched")
        #expect(loader.requestCount("p") == 1)
        #expect(manager.statistics.coalescedJoins >= 1)
    }

    @Test func prefetchesNeverCancelUserLoads() async {
        let loader = ScriptedDataLoader()
        loader.script("u", .held(firstChunk: Data("u".utf8), rest: Data()))
        for index in 0..<10 { loader.script("p\(index)", .body(Data("p".utf8))) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 1)
        let user = RecordingUser(request("u"), decoder: BlobDecoder())
        manager.manage(user)
        manager.prefetch((0..<10).map { request("p\($0)") })
        #expect(await waitUntil { (0..<10).allSatisfy { loader.requestCount("p\($0)") == 1 } })
        #expect(user.errors.isEmpty)
        loader.release("u")
        #expect(await waitUntil { user.objects.count == 1 })
    }

    @Test func dataOnlyPrefetchKeepsBytesForALaterDecoder() async {
        let loader = ScriptedDataLoader()
        loader.script("raw", .body(Data("raw".utf8)))
        let manager = makeScriptedManager(loader: loader)
        manager.prefetch([request("raw")])
        #expect(await waitUntil { manager.activeLoadCount == 0 && loader.requestCount("raw") == 1 })
        let user = RecordingUser(request("raw"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.origins == [.undecodedData])
        #expect(loader.requestCount("raw") == 1)
    }
}

@Suite struct DeliveryThreadTests {
    @Test func onlyTheManagedUserIsCalledSynchronously() async {
        let loader = ScriptedDataLoader()
        for path in ["ui", "next"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data())) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 1)
        let uiUser = RecordingUser(request("ui"), decoder: BlobDecoder(), delivery: .mainQueue)
        manager.manage(uiUser)
        #expect(await waitUntil { loader.activeCount("ui") == 1 })
        let other = RecordingUser(request("next"), decoder: BlobDecoder())
        manager.manage(other)
        #expect(manager.statistics.loadsCancelledByBuffer == 1)
        // The UI user's cancellation goes through the main queue, not through this thread inside `manage`.
        #expect(await waitUntil { uiUser.errors == [.cancelled(.loadingBufferOverflow)] })
        #expect(!MainQueueMarker.isOnMainQueue)
        #expect(uiUser.callbacksOnMainQueue == Array(repeating: true, count: uiUser.events.count))
    }

    /// Off the cooperative pool: it holds the main queue (see `MainQueueHold`).
    @Test(.offCooperativePool) func progressDecidedBeforeTheLoadEndedNeverFollowsTheFinalCallback() async {
        let loader = ScriptedDataLoader()
        for path in ["ui", "next"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data())) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 1)
        let uiUser = RecordingUser(request("ui"), decoder: BlobDecoder(), delivery: .mainQueue)
        // Hold the main queue so that the progress of the first chunk is still queued when the load ends.
        let hold = MainQueueHold()
        manager.manage(uiUser)
        #expect(await waitUntil { manager.statistics.bytesDownloaded > 0 })
        let other = RecordingUser(request("next"), decoder: BlobDecoder())
        manager.manage(other)
        hold.release()
        #expect(!hold.outlastedItsBound, "the main queue was not held until the load ended")
        #expect(await waitUntil { uiUser.errors == [.cancelled(.loadingBufferOverflow)] })
        // Whatever the order they were queued in, the stale progress is dropped.
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.main.async { drained.signal() }
        #expect(await waitUntil { drained.wait(timeout: .now()) == .success })
        #expect(uiUser.progress.isEmpty)
        #expect(uiUser.events.count == 1)
    }

    /// Before a push, only the loads whose own policy cancels them without users are checked and
    /// cancelled once abandoned; the others finish, whatever the order in the buffer.
    @Test func aPushCancelsOnlyTheAbandonedLoadsWhosePolicyCancelsThem() async {
        let loader = ScriptedDataLoader()
        for path in ["finishing", "cancelling", "next"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data("!".utf8))) }
        let manager = makeScriptedManager(loader: loader)  // finishes loads without users by default
        do {
            var cancelling = request("cancelling")
            cancelling.policy.finishLoadingWithoutUsers = false
            let users = [RecordingUser(request("finishing"), decoder: BlobDecoder()), RecordingUser(cancelling, decoder: BlobDecoder())]
            users.forEach(manager.manage)
            #expect(await waitUntil { loader.activeCount("finishing") == 1 && loader.activeCount("cancelling") == 1 })
        }  // both users released without `unmanage`
        let next = RecordingUser(request("next"), decoder: BlobDecoder())
        manager.manage(next)
        #expect(await waitUntil { loader.cancellationCount("cancelling") == 1 })
        #expect(loader.cancellationCount("finishing") == 0)
        #expect(manager.bufferedLoadKeys.map(\.dataKey) == ["finishing", "next"].map { ScriptedDataLoader.url($0).absoluteString })
        for path in ["finishing", "next"] { loader.release(path) }
        #expect(await waitUntil { next.objects.count == 1 })
    }
}
