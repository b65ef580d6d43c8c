import Dispatch
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// `DeadlineTimer`, the one timer behind cancelled transfers' grace periods and load rate limits:
/// each action runs once, never before its deadline, in the order of the deadlines, whatever the
/// order it came in.
@Suite struct DeadlineTimerTests {
    /// What ran, in order, with the seconds from the start to when it ran.
    final class Log: Sendable {
        private let entries = Lock<[(name: String, elapsed: Double)]>([])
        let start = DispatchTime.now()

        func record(_ name: String) {
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            entries.withLock { $0.append((name, elapsed)) }
        }

        var names: [String] { entries.withLock { $0.map(\.name) } }
        func elapsed(_ name: String) -> Double? { entries.withLock { $0.first { $0.name == name }?.elapsed } }
    }

    @Test func actionsRunOnceTheirDeadlinesPassInTheOrderOfTheDeadlines() async {
        let timer = DeadlineTimer()
        let log = Log()
        // Added latest-first: the second and third each come before what the timer is armed for.
        let delays = [("late", 0.3), ("early", 0.1), ("middle", 0.2)]
        // Each action's deadline lies between the clock read before its `run` and the one after:
        // a thread preempted between two calls can make a later call's deadline the later one
        // whatever its delay, so the order checked is that of the deadlines actually taken.
        var deadlines: [String: (earliest: UInt64, latest: UInt64)] = [:]
        for (name, delay) in delays {
            let before = DispatchTime.now().uptimeNanoseconds
            timer.run(after: delay) { log.record(name) }
            let after = DispatchTime.now().uptimeNanoseconds
            let nanoseconds = UInt64(delay * 1e9)
            deadlines[name] = (before + nanoseconds, after + nanoseconds)
        }
        #expect(await waitUntil { log.names.count == 3 })
        let ran = log.names
        #expect(Set(ran) == ["early", "middle", "late"])
        for (first, second) in [("early", "middle"), ("middle", "late"), ("early", "late")] {
            guard let one = deadlines[first], let other = deadlines[second], one.latest < other.earliest else { continue }
            #expect(ran.firstIndex(of: first)! < ran.firstIndex(of: second)!, "\(first) is due before \(second)")
        }
        for (name, delay) in delays {
            // Never early; how late depends on the machine and is not checked.
            #expect((log.elapsed(name) ?? 0) >= delay, "\(name) ran after \(log.elapsed(name) ?? 0) s")
        }
        #expect(timer.pendingCount == 0)
    }

    @Test func anActionAddedBehindTheArmedDeadlineWaitsForItsOwn() async {
        let timer = DeadlineTimer()
        let log = Log()
        timer.run(after: 0.05) { log.record("first") }
        timer.run(after: 0.25) { log.record("second") }  // the timer stays armed for the first
        #expect(await waitUntil { log.names == ["first"] || log.names.count == 2 })
        #expect(await waitUntil { log.names.count == 2 })
        #expect(log.names == ["first", "second"])
        #expect((log.elapsed("second") ?? 0) >= 0.25)
    }

    @Test func aTimerThatWentIdleRunsTheNextAction() async {
        let timer = DeadlineTimer()
        let log = Log()
        timer.run(after: 0.01) { log.record("before") }
        #expect(await waitUntil { log.names == ["before"] })
        #expect(timer.pendingCount == 0)
        timer.run(after: 0.01) { log.record("after") }
        #expect(await waitUntil { log.names == ["before", "after"] })
        #expect(timer.pendingCount == 0)
    }

    @Test func aSleepEndsNoEarlierThanItsDelay() async {
        let timer = DeadlineTimer()
        let log = Log()
        await timer.sleep(seconds: 0.1)
        log.record("woke")
        #expect((log.elapsed("woke") ?? 0) >= 0.1)
        #expect(timer.pendingCount == 0)
    }

    @Test func aCancelledSleepEndsAtOnce() async {
        let timer = DeadlineTimer()
        let log = Log()
        // Cancelled while it sleeps, and cancelled before it starts: neither waits for the deadline.
        // (The deadline stays pending on the timer's thread, which ends once it has passed.)
        let sleeping = Task {
            await timer.sleep(seconds: 300)
            log.record("woke")
        }
        #expect(await waitUntil { timer.pendingCount == 1 })
        sleeping.cancel()
        #expect(await waitUntil { log.names == ["woke"] })
        #expect((log.elapsed("woke") ?? .infinity) < 200)
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await timer.sleep(seconds: 300)
            log.record("never slept")
        }
        await cancelledFirst.value
        #expect(log.names == ["woke", "never slept"])
        #expect(timer.pendingCount == 1)  // only the first sleep's deadline
    }
}
