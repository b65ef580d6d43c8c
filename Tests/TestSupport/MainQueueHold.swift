import Dispatch
import ManagedCacheLocking

/// Holds the main queue (a block on it waits) until `release()`: for the tests that need a
/// main-queue delivery to be still queued when something else happens.
///
/// Holding the main queue stalls every main-actor test running beside the holder, so the hold
/// must be short whatever the machine is doing:
/// - The test that holds runs `.offCooperativePool`: its waits while it holds do not depend on
///   the cooperative pool, which the rest of the suite can keep busy for many seconds on a 2-core
///   machine under a sanitizer (11 s was measured). A hold that waited on the pool once lasted
///   past 30 s and made four main-actor tests beside it fail: their held loads hit the 30 s idle
///   timeout before those tests could see their progress and release them.
/// - The hold ends by itself after `bound` seconds (default 90) and says so
///   (`outlastedItsBound`): the holder then fails, saying its premise did not hold, rather than
///   the tests it would stall. The default outlasts any one wait of the holder's own, each
///   bounded by `waitBound` (60 s): 10 s was too short beside two busy loops and a build, and
///   30 s under AddressSanitizer with the whole suite and a build beside it (a holder's load
///   took that long to deliver its first chunk, and its wait for that chunk then succeeded with
///   the hold already gone). The tests it stalls meanwhile tolerate it: their waits on the main
///   queue count only the time they were not held up, and their loads' idle timeout is 300 s.
///
/// ```swift
/// let hold = MainQueueHold()
/// manager.manage(user)            // its main-queue delivery queues behind the hold
/// hold.release()
/// #expect(!hold.outlastedItsBound)
/// ```
public final class MainQueueHold: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let started = DispatchSemaphore(value: 0)
    private let expired = Lock(false)

    /// Queues the holding block on the main queue now.
    ///
    /// - Parameter bound: The longest the main queue is held, in seconds.
    public init(bound: Double = 90) {
        DispatchQueue.main.async { [released, started, expired] in
            started.signal()
            if released.wait(timeout: .now() + bound) == .timedOut { expired.withLock { $0 = true } }
        }
    }

    /// Waits (off the main queue) until the holding block runs, at most `seconds`: from then on,
    /// every block queued on the main queue before the hold has run, and every block queued after
    /// it waits. Returns whether it began within the bound.
    public func waitUntilHolding(atMost seconds: Double = 30) -> Bool {
        guard started.wait(timeout: .now() + seconds) == .success else { return false }
        started.signal()  // a later call returns at once too
        return true
    }

    /// Lets the main queue go on (its queued blocks run after the holding one).
    public func release() { released.signal() }

    /// Whether the hold ended by its bound before `release()`: what the test meant to hold was not held.
    public var outlastedItsBound: Bool { expired.withLock { $0 } }
}
