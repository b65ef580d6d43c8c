import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// A UI user's last release happens on the main queue, even when the manager found it alive off
/// the main queue, under its lock, at the moment the app dropped its last reference.
@Suite(.offCooperativePool) struct UserReleaseTests {
    /// A thread-safe user delivered on the main queue (as `ManagedImageView` is) that records
    /// where it deinitialises.
    final class ViewLikeUser: ManagedObjectUser {
        let objectRequest: ObjectRequest? = request("a")
        let objectDecoder = BlobDecoder()
        var callbackDelivery: CallbackDelivery { .mainQueue }
        let deinitOnMainQueue: Lock<Bool?>

        init(recordingInto deinitOnMainQueue: Lock<Bool?>) { self.deinitOnMainQueue = deinitOnMainQueue }
        deinit { deinitOnMainQueue.withLock { $0 = MainQueue.isCurrent } }
        func managedObjectReady(_ object: Blob, origin: DataOrigin, request: ObjectRequest) {}
        func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {}
    }

    /// Asks `link.isAlive` on a thread of its own (never the main queue) and waits for the answer.
    private func isAliveOffTheMainQueue(_ link: any UserLink) -> Bool {
        let answer = Lock<Bool?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            answer.withLock { $0 = link.isAlive }
            answered.signal()
        }
        answered.wait()
        return answer.withLock { $0 } ?? false
    }

    @Test func aMainQueueUserFoundAliveOffTheMainQueueIsReleasedOnIt() async {
        let deinitOnMainQueue = Lock<Bool?>(nil)
        var user: ViewLikeUser? = ViewLikeUser(recordingInto: deinitOnMainQueue)
        let link = ThreadSafeUserLink(user!, delivery: .mainQueue, wantsPreviews: false)
        // Held, so the reference the check keeps is still kept when the app drops its own. Once
        // the hold runs, a release of kept references another test queued earlier has run too:
        // it would otherwise release this one's with its batch.
        let hold = MainQueueHold()
        #expect(hold.waitUntilHolding(), "the main queue did not begin the hold")
        #expect(isAliveOffTheMainQueue(link))
        user = nil
        #expect(deinitOnMainQueue.withLock { $0 } == nil, "the check kept no reference")
        hold.release()
        #expect(await waitUntil { deinitOnMainQueue.withLock { $0 } != nil })
        #expect(deinitOnMainQueue.withLock { $0 } == true, "the user deinitialised off the main queue")
        #expect(!isAliveOffTheMainQueue(link))
        #expect(!hold.outlastedItsBound)
    }

    @Test func aMainActorUserFoundAliveOffTheMainQueueIsReleasedOnIt() async {
        let deinitOnMainQueue = Lock<Bool?>(nil)
        let holder = Lock<ReleaseRecordingController?>(nil)
        let link: any UserLink = await MainActor.run {
            let user = ReleaseRecordingController(recordingInto: deinitOnMainQueue)
            holder.withLock { $0 = user }
            return MainActorUserLink(user, wantsPreviews: false)
        }
        let hold = MainQueueHold()
        #expect(hold.waitUntilHolding(), "the main queue did not begin the hold")
        #expect(isAliveOffTheMainQueue(link))
        // Dropped off the main queue, as a `Sendable` user may be: the check's reference is the last.
        holder.withLock { $0 = nil }
        #expect(deinitOnMainQueue.withLock { $0 } == nil, "the check kept no reference")
        hold.release()
        #expect(await waitUntil { deinitOnMainQueue.withLock { $0 } != nil })
        #expect(deinitOnMainQueue.withLock { $0 } == true, "the user deinitialised off the main queue")
        #expect(!hold.outlastedItsBound)
    }
}

/// A main-actor user (a view controller) that records whether it deinitialised on the main queue.
@MainActor final class ReleaseRecordingController: MainActorObjectUser {
    let objectRequest: ObjectRequest? = request("a")
    let objectDecoder = BlobDecoder()
    let deinitOnMainQueue: Lock<Bool?>

    init(recordingInto deinitOnMainQueue: Lock<Bool?>) { self.deinitOnMainQueue = deinitOnMainQueue }
    deinit { deinitOnMainQueue.withLock { $0 = MainQueue.isCurrent } }
    func managedObjectReady(_ object: Blob, origin: DataOrigin, request: ObjectRequest) {}
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {}
}
