import Foundation

/// The default bound of `waitUntil` and `waitUntilBlocking`, in seconds. Generous on purpose: on
/// a 2-core CI machine shared with other builds (load average 15 was seen) the work a test waits
/// for can take many seconds to be scheduled. It only limits how long a hang takes to report.
public let waitBound: Double = 60

/// How long a test's hold of something the code under test waits for (a delegate queue, a
/// callback) may last before it lets go by itself, in seconds: longer than any `waitUntil` of the
/// test can take (a wait stretched by a starved machine ends at 4 × its timeout, `WaitBudget`).
/// A hold that ended sooner let the code go on while the test was still waiting to see it held.
/// The test releases the hold itself; this bound only ends a hold the test never released.
public let holdBound: Double = 5 * waitBound

/// Waits until `condition` holds, checking every few milliseconds, for at most `timeout` seconds
/// of the waiter's own time (see `WaitBudget`). Returns whether it held. Tests assert on the
/// returned value: the verdict depends on the condition, never on how long it took (the timeout
/// only bounds a hang). The bound is generous (60 s) because on a 2-core machine the heavy
/// file-cache tests can hold both cooperative threads for many seconds while this test waits its turn.
@discardableResult
public func waitUntil(timeout: Double = waitBound, _ condition: @Sendable () -> Bool) async -> Bool {
    var budget = WaitBudget(timeout: timeout, pause: 0.005)
    while budget.hasTimeLeft {
        if condition() { return true }
        let began = Date()
        try? await Task.sleep(nanoseconds: 5_000_000)
        budget.paused(since: began)
    }
    return condition()
}

/// The same, for synchronous code (threads rather than tasks).
@discardableResult
public func waitUntilBlocking(timeout: Double = waitBound, _ condition: () -> Bool) -> Bool {
    var budget = WaitBudget(timeout: timeout, pause: 0.002)
    while budget.hasTimeLeft {
        if condition() { return true }
        let began = Date()
        usleep(2_000)
        budget.paused(since: began)
    }
    return condition()
}

/// Waits on the main actor until `condition` holds (bounded by `waitBound`); the main actor is
/// free meanwhile, so main-actor callbacks can run.
///
/// It pauses on the main queue, not with `Task.sleep`: a sleeping task wakes up through the
/// cooperative pool, which the rest of the suite keeps busy on a 2-core machine (under
/// AddressSanitizer it ran nothing new for 19 s at the start of a run). A main-actor test
/// polling with `Task.sleep` then stood still for as long, and loads it held open for it
/// reached their idle timeout before it could see their progress and release them.
@MainActor public func waitOnMainActor(_ condition: @MainActor () -> Bool) async -> Bool {
    var budget = WaitBudget(timeout: waitBound, pause: 0.005)
    while budget.hasTimeLeft {
        if condition() { return true }
        let began = Date()
        await pauseOnMainQueue()
        budget.paused(since: began)
    }
    return condition()
}

/// Suspends the calling main-actor task for about 5 ms, resumed from the main queue (no
/// cooperative-pool thread is involved).
@MainActor func pauseOnMainQueue() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(5)) { continuation.resume() }
    }
}

/// How long a wait has left: `timeout` seconds of the waiter's own time, not of the wall clock.
///
/// Every pause that returns later than it asked (by more than a millisecond) moves the deadline
/// back by the difference: that time went to a machine too busy to run the waiter, and the work
/// it waits for is queued behind the same threads. Under AddressSanitizer the suite keeps both
/// cooperative threads of a 2-core machine busy for most of a run: a test started at the
/// beginning waited 58 s of wall-clock time in a passing run, and 61 s, past a wall-clock bound
/// of 60 s, in a failing one, while its load was still queued. A hang still ends the wait: after
/// `timeout` seconds on a machine that runs the waiter, and after `4 × timeout` seconds of wall
/// clock in any case.
struct WaitBudget {
    private let start = Date()
    private let timeout: Double
    private let pause: Double
    private var deadline: Date

    init(timeout: Double, pause: Double) {
        self.timeout = timeout
        self.pause = pause
        deadline = start.addingTimeInterval(timeout)
    }

    /// Whether the wait may go on.
    var hasTimeLeft: Bool {
        let now = Date()
        return now < deadline && now.timeIntervalSince(start) < 4 * timeout
    }

    /// Records a pause that began at `began` and just ended.
    mutating func paused(since began: Date) {
        let overdue = Date().timeIntervalSince(began) - pause - 0.001
        if overdue > 0 { deadline.addTimeInterval(overdue) }
    }
}
