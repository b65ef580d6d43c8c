import ManagedCacheLocking

/// Paces the loads a manager sends to its loader (``LoadRateLimit``): a token bucket holding up
/// to `burst` tokens, refilled at `loadsPerSecond`; each load that goes on spends one.
///
///     admit ──a token, nobody waiting──▶ goes on at once (a token spent)
///       └──otherwise──▶ waiting ──drain: a token, its turn──▶ goes on (a token spent)
///                          └──cancelled──▶ throws `CancellationError` (no token spent)
///
/// While loads wait, a drain is on the process's `DeadlineTimer` for when the next token is due
/// (one timer for the process: arming a dispatch timer per wait would wake dispatch's event
/// thread each time, see `DeadlineTimer`). Waiting loads go highest priority first, first come
/// first served within one priority (`PriorityWaitQueue`). A load whose users all left (the cells
/// of rows scrolled past) has priority `.veryLow` (`LoadCore._refreshPriority`), so when a
/// scroll stops the cells on screen go first.
final class LoadRateLimiter: Sendable {
    private struct State {
        /// Tokens at `refilledAt` (fractions accrue).
        var tokens: Double
        var refilledAt: MonotonicInstant
        var waiting = PriorityWaitQueue()
        var nextIdentifier: UInt64 = 0
        /// Waits cancelled before they were queued (the cancellation handler ran first).
        var cancelledEarly: Set<UInt64> = []
        /// Whether a drain is on the timer.
        var drainScheduled = false
    }

    let loadsPerSecond: Double
    let burst: Double
    /// The shortest time between two drains, in seconds: tokens that come sooner go together.
    static let shortestDrainInterval = 0.005
    private let clock: @Sendable () -> MonotonicInstant
    private let timer: DeadlineTimer
    private let state: Lock<State>

    /// A limiter for `limit` (its values clamped as ``LoadRateLimit`` documents) that starts with
    /// a full bucket. `clock` and `timer` are for tests.
    init(
        _ limit: LoadRateLimit, clock: @escaping @Sendable () -> MonotonicInstant = { .now },
        timer: DeadlineTimer = .shared
    ) {
        let burst = Double(max(1, limit.burst))
        loadsPerSecond = limit.loadsPerSecond > 0 ? limit.loadsPerSecond : 1  // NaN fails the comparison too
        self.burst = burst
        self.clock = clock
        self.timer = timer
        state = Lock(State(tokens: burst, refilledAt: clock()))
    }

    /// Returns when the load may go on: at once while the bucket has a token and nobody waits,
    /// else when a drain gives it one. Throws `CancellationError` when the calling task is
    /// cancelled first; it then spends no token.
    func admit(priority: @escaping @Sendable () -> LoadPriority = { .normal }) async throws {
        let identifier = state.withLock { state -> UInt64? in
            if _takeTokenIfFree(&state) { return nil }
            state.nextIdentifier &+= 1
            return state.nextIdentifier
        }
        guard let identifier else { return }
        try await PriorityWaitQueue.wait(
            identifier: identifier, priority: priority,
            enqueue: { waiter in
                let (enqueued, drainDelay) = state.withLock { state -> (PriorityWaitQueue.Enqueued, Double?) in
                    if state.cancelledEarly.remove(identifier) != nil { return (.cancelled, nil) }
                    // A token may have come between the first look and now.
                    if _takeTokenIfFree(&state) { return (.admitted, nil) }
                    state.waiting.append(waiter)
                    return (.queued, _reserveDrain(&state))
                }
                if let drainDelay { scheduleDrain(after: drainDelay) }
                return enqueued
            },
            withdraw: { [state] identifier in
                state.withLock { state in
                    // Not queued yet (or already admitted: then `forget` drops the mark).
                    guard let waiter = state.waiting.remove(identifier) else {
                        state.cancelledEarly.insert(identifier)
                        return nil
                    }
                    return waiter
                }
            },
            forget: { identifier in state.withLock { _ = $0.cancelledEarly.remove(identifier) } })
    }

    /// Lets as many waiting loads go on as there are tokens, highest priority first, and puts
    /// the next drain on the timer while loads still wait. The timer calls it; tests too.
    func drain() {
        let (admitted, drainDelay) = state.withLock { state -> ([PriorityWaitQueue.Waiter], Double?) in
            state.drainScheduled = false
            _refill(&state)
            var admitted: [PriorityWaitQueue.Waiter] = []
            while state.tokens >= 1, let next = state.waiting.removeHighestPriority() {
                state.tokens -= 1
                admitted.append(next)
            }
            return (admitted, _reserveDrain(&state))
        }
        if let drainDelay { scheduleDrain(after: drainDelay) }
        for waiter in admitted { waiter.continuation.resume() }
    }

    /// Loads waiting for a token (for tests and diagnostics).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Spends a token when there is one and nobody waits ahead.
    private func _takeTokenIfFree(_ state: inout State) -> Bool {
        _refill(&state)
        guard state.waiting.isEmpty, state.tokens >= 1 else { return false }
        state.tokens -= 1
        return true
    }

    private func _refill(_ state: inout State) {
        let now = clock()
        state.tokens = min(burst, state.tokens + now.seconds(since: state.refilledAt) * loadsPerSecond)
        state.refilledAt = now
    }

    /// When loads wait and no drain is on the timer: marks one as scheduled and returns its
    /// delay (until the next token, at least `shortestDrainInterval`), to schedule once the lock
    /// is released.
    private func _reserveDrain(_ state: inout State) -> Double? {
        guard !state.drainScheduled, !state.waiting.isEmpty else { return nil }
        state.drainScheduled = true
        return max(Self.shortestDrainInterval, (1 - state.tokens) / loadsPerSecond)
    }

    private func scheduleDrain(after seconds: Double) {
        timer.run(after: seconds) { [weak self] in self?.drain() }
    }
}
