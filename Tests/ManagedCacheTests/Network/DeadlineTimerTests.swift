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
        for (name, delay) in delays { timer.run(after: delay) { log.record(name) } }
        #expect(await waitUntil { log.names.count == 3 })
        #expect(log.names == ["early", "middle", "late"])
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
}
