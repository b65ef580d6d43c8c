import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// Deallocating a manager cancels its loads and tells the users waiting for them, on the
/// thread their `callbackDelivery` names, so nothing waits forever on a manager that is gone.
@Suite struct ManagerDeallocationTests {
    @Test func usersOfLoadsUnderWayAreToldTheManagerShutDown() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("a".utf8), rest: Data("!".utf8)))
        loader.script("done", .body(Data("done".utf8)))
        let waiting = RecordingUser(request("a"), decoder: BlobDecoder())
        let onMain = RecordingUser(request("a"), decoder: BlobDecoder(), delivery: .mainQueue)
        let served = RecordingUser(request("done"), decoder: BlobDecoder())
        do {
            let manager = makeScriptedManager(loader: loader)
            for user in [waiting, onMain, served] { manager.manage(user) }
            #expect(await waitUntil { loader.activeCount("a") == 1 && served.objects.count == 1 })
        }
        #expect(await waitUntil { onMain.finalCallbackCount == 1 })
        #expect(waiting.errors == [.cancelled(.managerShutDown)])
        #expect(onMain.errors == [.cancelled(.managerShutDown)])
        #expect(onMain.callbacksOnMainQueue.allSatisfy { $0 })
        #expect(served.finalCallbackCount == 1)  // its request was answered already
        #expect(await waitUntil { loader.cancellationCount("a") == 1 })
    }

    @Test func anEventStreamEndsWhenItsManagerIsDeallocated() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("a".utf8), rest: Data("!".utf8)))
        let ended = Lock<ManagedCacheError?>(nil)
        let consumer: Task<Void, Never>
        do {
            let manager = makeScriptedManager(loader: loader)
            let stream = manager.loadEvents(for: request("a"), decoder: BlobDecoder())
            consumer = Task {
                do {
                    for try await _ in stream {}
                } catch let error as ManagedCacheError {
                    ended.withLock { $0 = error }
                } catch {}
            }
            #expect(await waitUntil { loader.activeCount("a") == 1 })
        }
        #expect(await waitUntil { ended.withLock { $0 } != nil })
        #expect(ended.withLock { $0 } == .cancelled(.managerShutDown))
        consumer.cancel()
    }
}
