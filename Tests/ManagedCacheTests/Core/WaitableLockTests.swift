import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

/// `WaitableLock`: a wait ends once another thread makes its condition true, and runs its body
/// as one step with that condition.
@Suite(.offCooperativePool) struct WaitableLockTests {
    @Test func aWaitEndsWhenAnotherThreadMakesItsConditionTrue() async {
        let lock = WaitableLock(0)
        let seen = Lock<Int?>(nil)
        Thread.detachNewThread {
            let value = lock.withLock(
                waitingUntil: { $0 >= 3 },
                then: { value -> Int in
                    value += 100  // in the same step as the condition's last check
                    return value
                })
            seen.withLock { $0 = value }
        }
        for _ in 0..<3 {
            lock.withLock { $0 += 1 }
        }
        #expect(await waitUntil { seen.withLock { $0 } != nil })
        #expect(seen.withLock { $0 } == 103)
        #expect(lock.withLock { $0 } == 103)
    }

    @Test func aConditionAlreadyTrueDoesNotWait() {
        let lock = WaitableLock("ready")
        #expect(lock.withLock(waitingUntil: { $0 == "ready" }, then: { $0.count }) == 5)
    }
}
