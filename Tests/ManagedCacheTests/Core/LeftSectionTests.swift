import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// A caller with a wait budget that finds the manager's lock held past it leaves its
/// section instead of waiting (`ManagerLock.withLock(waitingAtMost:_:otherwise:)`). Left sections
/// run once each, in the order they were left, before any later holder without a budget reads the
/// state; what they decide runs after the lock, on the hand-off queue.
@Suite(.offCooperativePool) struct LeftSectionTests {
    /// Leaves a section that records `number` under the lock and, after it, in `then`.
    private func leave(_ number: Int, on lock: ManagerLock, ran: Lock<[Int]>, then: Lock<[Int]>) -> Bool {
        let direct = lock.withLock(
            waitingAtMost: 0.001, { _ in number },
            otherwise: {
                { state in
                    state.statistics.requests += 1
                    ran.withLock { $0.append(number) }
                    return { then.withLock { $0.append(number) } }
                }
            })
        return direct == nil
    }

    @Test func sectionsLeftWhileTheLockIsHeldRunInOrderOnceItIsReleased() async {
        let lock = ManagerLock(ManagerState(loadingBufferSize: 4))
        let (ran, then) = (Lock<[Int]>([]), Lock<[Int]>([]))
        let holding = MutexHolder(lock)
        defer { holding.release() }
        #expect([1, 2, 3].allSatisfy { leave($0, on: lock, ran: ran, then: then) }, "a section ran while the lock was held")
        #expect(ran.withLock { $0 }.isEmpty)
        holding.release()
        #expect(await waitUntil { then.withLock { $0.count } == 3 })
        #expect(ran.withLock { $0 } == [1, 2, 3])
        #expect(then.withLock { $0 } == [1, 2, 3])
        #expect(lock.withLock { $0.statistics.requests } == 3)  // each ran once
    }

    @Test func aHolderWithoutABudgetRunsTheLeftSectionsBeforeItsOwn() async {
        let lock = ManagerLock(ManagerState(loadingBufferSize: 4))
        let (ran, then) = (Lock<[Int]>([]), Lock<[Int]>([]))
        let holding = MutexHolder(lock)
        defer { holding.release() }
        #expect(leave(1, on: lock, ran: ran, then: then))
        #expect(leave(2, on: lock, ran: ran, then: then))
        let seen = Lock<Int?>(nil)
        Thread.detachNewThread {
            let requests = lock.withLock { $0.statistics.requests }
            seen.withLock { $0 = requests }
        }
        holding.release()
        #expect(await waitUntil { seen.withLock { $0 } != nil })
        #expect(seen.withLock { $0 } == 2, "the holder read the state without the sections left before it")
        #expect(await waitUntil { then.withLock { $0 } == [1, 2] })
    }

    @Test func aFreeLockRunsTheSectionOnTheCallersThread() {
        let lock = ManagerLock(ManagerState(loadingBufferSize: 4))
        let ran = lock.withLock(
            waitingAtMost: 0.001, { _ in 7 },
            otherwise: {
                Issue.record("left a section although the lock was free")
                return { _ in {} }
            })
        #expect(ran?.result == 7)
    }
}
