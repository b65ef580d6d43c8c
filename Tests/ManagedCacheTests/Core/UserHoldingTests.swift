import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// A user that counts its callbacks in a tally that outlives it, and records whether the manager
/// read any of its properties on a thread other than the one that called `manage`.
final class TallyUser: ManagedObjectUser {
    /// What happened to the users of a test, from any thread.
    final class Tally: Sendable {
        let ready = Counter()
        let failed = Counter()
        let progress = Counter()
        /// Property reads made on a thread not marked as the managing thread.
        let foreignReads = Counter()
        let reads = Counter()
    }

    /// The thread-dictionary key that marks the thread calling `manage`.
    static let managingThreadKey = "TallyUser.managing"

    let tally: Tally
    private let request: ObjectRequest
    private let delivery: CallbackDelivery

    init(_ request: ObjectRequest, tally: Tally, delivery: CallbackDelivery = .immediate) {
        self.request = request
        self.tally = tally
        self.delivery = delivery
    }

    private func noteRead() {
        tally.reads.increment()
        if Thread.current.threadDictionary[Self.managingThreadKey] == nil { tally.foreignReads.increment() }
    }

    var objectRequest: ObjectRequest? {
        noteRead()
        return request
    }
    var objectDecoder: BlobDecoder {
        noteRead()
        return BlobDecoder()
    }
    var callbackDelivery: CallbackDelivery {
        noteRead()
        return delivery
    }

    func managedObjectReady(_ object: Blob, origin: DataOrigin, request: ObjectRequest) { tally.ready.increment() }
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { tally.failed.increment() }
    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) { tally.progress.increment() }
}

/// Runs `body` on a new thread marked as the managing thread, and waits for it.
func onManagingThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        Thread.current.threadDictionary[TallyUser.managingThreadKey] = true
        body()
        done.signal()
    }
    thread.start()
    done.wait()
}

/// The manager holds users weakly everywhere, in flight too, and
/// reads their properties only on the thread that calls `manage`.
@Suite struct UserHoldingTests {
    /// Off the cooperative pool: it holds the main queue (see `MainQueueHold`).
    @Test(.offCooperativePool) func aUserReleasedWhileItsMainQueueDeliveryWaitsIsNeitherKeptAliveNorCalled() async {
        let loader = ScriptedDataLoader()
        loader.script("busy", .held(firstChunk: Data("bu".utf8), rest: Data("sy".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let tally = TallyUser.Tally()
        var user: TallyUser? = TallyUser(request("busy"), tally: tally, delivery: .mainQueue)
        weak let released = user
        manager.manage(user!)
        // Attached after it, so told after it: once this one has the object, the first one's
        // delivery is queued on the main queue.
        let witness = RecordingUser(request("busy"), decoder: BlobDecoder())
        manager.manage(witness)
        #expect(await waitUntil { loader.activeCount("busy") == 1 })

        let hold = MainQueueHold()
        loader.release("busy")
        #expect(await waitUntil { witness.objects.count == 1 })
        user = nil
        hold.release()
        #expect(!hold.outlastedItsBound, "the main queue was not held until the user was released")
        await drainMainQueue()
        // Found alive off the main queue when its delivery was decided, it was kept until the
        // main queue ran, so that its last release is there (see `MainQueueRelease`); the queued
        // delivery does not keep it alive...
        #expect(released == nil)
        // ...and nothing calls it.
        #expect(tally.ready.count == 0 && tally.failed.count == 0)
        #expect(witness.objects.count == 1)
    }

    @Test func everyPropertyIsReadOnTheThreadThatCallsManage() async {
        let loader = ScriptedDataLoader()
        loader.script("slow", .held(firstChunk: Data("sl".utf8), rest: Data("ow".utf8)))
        loader.script("other", .held(firstChunk: Data("ot".utf8), rest: Data("her".utf8)))
        let manager = makeScriptedManager(loader: loader, bufferSize: 1)
        let tally = TallyUser.Tally()
        // One user finishes with the object, one is cancelled by the loading buffer, each with
        // progress first; one of them on the main queue.
        let finishing = TallyUser(request("other"), tally: tally, delivery: .mainQueue)
        let cancelled = TallyUser(request("slow"), tally: tally)
        onManagingThread { manager.manage(cancelled) }
        #expect(await waitUntil { tally.progress.count >= 1 })
        onManagingThread { manager.manage(finishing) }
        #expect(await waitUntil { tally.failed.count == 1 })
        loader.release("other")
        #expect(await waitUntil { tally.ready.count == 1 })
        #expect(tally.reads.count >= 6)
        #expect(tally.foreignReads.count == 0)
    }

    @Test func aReleasedNotificationObservationIsRemoved() {
        let name = Notification.Name("UserHoldingTests.\(UUID().uuidString)")
        let calls = Counter()
        var observation: NotificationObservation? = NotificationObservation(name) { calls.increment() }
        NotificationCenter.default.post(name: name, object: nil)
        #expect(calls.count == 1)
        withExtendedLifetime(observation) {}
        observation = nil
        NotificationCenter.default.post(name: name, object: nil)
        #expect(calls.count == 1)
    }
}

/// Waits until the main queue has run everything queued before this call.
func drainMainQueue() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async { continuation.resume() }
    }
}
