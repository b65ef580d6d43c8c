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
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
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

/// Waits on the main actor until `condition` holds (bounded by `waitBound`); the main actor is
/// free meanwhile, so main-actor callbacks can run.
///
/// It pauses on the main queue, not with `Task.sleep`: a sleeping task wakes up through the
/// cooperative pool, which the rest of the suite keeps busy on a 2-core machine (under
/// AddressSanitizer it ran nothing new for 19 s at the start of a run). A main-actor test
/// polling with `Task.sleep` then stood still for as long, and loads it held open for it
/// reached their idle timeout before it could see their progress and release them.
@MainActor public func waitOnMainActor(_ condition: @MainActor () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(waitBound)
    while Date() < deadline {
        if condition() { return true }
        await pauseOnMainQueue()
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
