import Foundation
import ManagedCacheLocking
import Testing

/// `Lock.withLock(waitingAtMost:_:)`: runs its body when the lock comes free within the budget,
/// and gives up, without running it, when it does not.
@Suite(.offCooperativePool) struct LockBudgetTests {
    @Test func aFreeLockRunsTheBodyAndAHeldOneGivesUpAfterTheBudget() {
        let lock = Lock(0)
        #expect(
            lock.withLock(waitingAtMost: 0) { value -> Int in
                value += 1
                return value
            } == 1)
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            lock.withLock { _ in
                held.signal()
                release.wait()
            }
        }
        held.wait()
        let ran = lock.withLock(waitingAtMost: 0.01) { value -> Bool in
            value += 1
            return true
        }
        #expect(ran == nil)
        release.signal()
        // Free again: a generous budget is met as soon as the holder lets go.
        #expect(lock.withLock(waitingAtMost: 60) { $0 } == 1)
    }
}
