import Foundation

/// The default bound of `waitUntil` and `waitUntilBlocking`, in seconds. Generous on purpose: on
/// a 2-core CI machine shared with other builds (load average 15 was seen) the work a test waits
/// for can take many seconds to be scheduled. It only limits how long a hang takes to report.
public let waitBound: Double = 60

/// Waits until `condition` holds, checking every few milliseconds, for at most `timeout` seconds.
/// Returns whether it held. Tests assert on the returned value: the verdict depends on the
/// condition, never on how long it took (the timeout only bounds a hang). The bound is generous
/// (60 s) because on a 2-core machine the heavy file-cache tests can hold both cooperative threads
/// for many seconds while this test waits its turn.
@discardableResult
public func waitUntil(timeout: Double = waitBound, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// The same, for synchronous code (threads rather than tasks).
@discardableResult
public func waitUntilBlocking(timeout: Double = waitBound, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}
