import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Fetch tasks are created after the manager's lock is released (`ManagerLock`,
/// `FetchTaskSlot`), and cancelled off the calling thread.
@Suite struct FetchStartTests {
    /// A start whose task records that it ran and then waits to be cancelled.
    private func makeStart(ran: Lock<Bool>, cancelled: Lock<Bool>) -> FetchStart {
        FetchStart(slot: FetchTaskSlot(), running: SharedLock(0)) {
            ran.withLock { $0 = true }
            await withTaskCancellationHandler {
                while !Task.isCancelled { try? await Task.sleep(nanoseconds: 1_000_000) }
            } onCancel: {
                cancelled.withLock { $0 = true }
            }
        }
    }

    @Test func aStartQueuedUnderTheLockRunsOnceTheLockIsReleased() async {
        let lock = ManagerLock(ManagerState(loadingBufferSize: 4))
        let (ran, cancelled) = (Lock(false), Lock(false))
        let start = makeStart(ran: ran, cancelled: cancelled)
        let taskExistedInside = lock.withLock { state -> Bool in
            state.fetchStarts.append(start)
            return start.slot.hasTask
        }
        #expect(!taskExistedInside)
        #expect(start.slot.hasTask)  // created before `withLock` returned
        #expect(lock.withLock { $0.fetchStarts.isEmpty })
        #expect(await waitUntil { ran.withLock { $0 } })
        start.slot.cancel()
        #expect(await waitUntil { cancelled.withLock { $0 } })
    }

    @Test func aStartQueuedByABodyThatThrowsStillRuns() {
        struct Failure: Error {}
        let lock = ManagerLock(ManagerState(loadingBufferSize: 4))
        let start = makeStart(ran: Lock(false), cancelled: Lock(false))
        #expect(throws: Failure.self) {
            try lock.withLock { state throws(Failure) in
                state.fetchStarts.append(start)
                throw Failure()
            }
        }
        #expect(start.slot.hasTask)
        start.slot.cancel()
    }

    @Test func aFetchCancelledBeforeItsStartNeverGetsATask() {
        let start = makeStart(ran: Lock(false), cancelled: Lock(false))
        start.slot.cancel()
        start.run()
        #expect(!start.slot.hasTask)
    }

    @Test func theRunningCountCoversTheTaskFromItsCreationToItsEnd() async {
        let running = SharedLock(0)
        let release = Lock(false)
        let start = FetchStart(slot: FetchTaskSlot(), running: running) {
            while !release.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 1_000_000) }
        }
        start.run()
        #expect(running.withLock { $0 } == 1)
        release.withLock { $0 = true }
        #expect(await waitUntil { running.withLock { $0 } == 0 })
    }
}
