import Dispatch
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// `LoadRateLimiter`, the token bucket behind `LoadRateLimit`, driven directly. The clock is moved
/// by hand and the tests drain themselves (on a timer of their own that nothing else uses), so
/// which load goes when never depends on real time.
@Suite struct LoadRateLimiterTests {
    /// A monotonic clock moved by hand.
    final class HandClock: Sendable {
        private let nanoseconds = Lock<UInt64>(1_000_000_000)

        func advance(seconds: Double) {
            nanoseconds.withLock { $0 += UInt64(seconds * 1e9) }
        }

        var closure: @Sendable () -> MonotonicInstant { { MonotonicInstant(nanoseconds: self.nanoseconds.withLock { $0 }) } }
    }

    /// The names of the loads admitted, in order.
    final class Admissions: Sendable {
        private let names = Lock<[String]>([])
        var all: [String] { names.withLock { $0 } }
        func record(_ name: String) { names.withLock { $0.append(name) } }
    }

    /// A limiter on a hand clock, with a timer whose drains find no token unless the test moved
    /// the clock (they run, harmlessly, in real time).
    private func makeLimiter(_ limit: LoadRateLimit, clock: HandClock) -> LoadRateLimiter {
        LoadRateLimiter(limit, clock: clock.closure, timer: DeadlineTimer())
    }

    /// Starts a task that waits for admission and records `name` once admitted (or "name
    /// cancelled" when it throws).
    private func admitting(
        _ name: String, _ limiter: LoadRateLimiter, _ admissions: Admissions, priority: LoadPriority = .normal
    ) -> Task<Void, Never> {
        Task {
            do {
                try await limiter.admit { priority }
                admissions.record(name)
            } catch {
                admissions.record("\(name) cancelled")
            }
        }
    }

    @Test func aFullBucketLetsTheBurstGoAtOnceAndTheNextWaitsForAToken() async {
        let clock = HandClock()
        let limiter = makeLimiter(LoadRateLimit(loadsPerSecond: 10, burst: 3), clock: clock)
        let admissions = Admissions()
        for index in 1...3 { await admitting("\(index)", limiter, admissions).value }
        #expect(admissions.all == ["1", "2", "3"])

        let fourth = admitting("4", limiter, admissions)
        #expect(await waitUntil { limiter.waitingCount == 1 })
        limiter.drain()  // no time has passed: no token
        #expect(limiter.waitingCount == 1)
        #expect(admissions.all == ["1", "2", "3"])

        clock.advance(seconds: 0.05)  // half a token
        limiter.drain()
        #expect(limiter.waitingCount == 1)
        clock.advance(seconds: 0.05)  // a whole one
        limiter.drain()
        await fourth.value
        #expect(admissions.all == ["1", "2", "3", "4"])
        #expect(limiter.waitingCount == 0)
    }

    @Test func tokensAccrueAtTheRateUpToTheBurst() async {
        let clock = HandClock()
        let limiter = makeLimiter(LoadRateLimit(loadsPerSecond: 10, burst: 4), clock: clock)
        let admissions = Admissions()
        for index in 1...4 { await admitting("\(index)", limiter, admissions).value }
        clock.advance(seconds: 60)  // 600 tokens' worth: the bucket holds 4
        for index in 5...8 { await admitting("\(index)", limiter, admissions).value }
        #expect(admissions.all.count == 8)
        let ninth = admitting("9", limiter, admissions)
        #expect(await waitUntil { limiter.waitingCount == 1 }, "the bucket kept no more than its burst")
        clock.advance(seconds: 0.1)
        limiter.drain()
        await ninth.value
        #expect(admissions.all.last == "9")
    }

    @Test func aLoadCancelledWhileWaitingThrowsAndSpendsNoToken() async {
        let clock = HandClock()
        let limiter = makeLimiter(LoadRateLimit(loadsPerSecond: 10, burst: 1), clock: clock)
        let admissions = Admissions()
        await admitting("first", limiter, admissions).value
        let cancelled = admitting("second", limiter, admissions)
        #expect(await waitUntil { limiter.waitingCount == 1 })
        let third = admitting("third", limiter, admissions)
        #expect(await waitUntil { limiter.waitingCount == 2 })
        cancelled.cancel()
        await cancelled.value
        #expect(admissions.all == ["first", "second cancelled"])
        #expect(limiter.waitingCount == 1)

        clock.advance(seconds: 0.1)  // one token: it goes to the load still waiting
        limiter.drain()
        await third.value
        #expect(admissions.all == ["first", "second cancelled", "third"])
    }

    @Test func aLoadCancelledBeforeItWaitsNeverWaits() async {
        let clock = HandClock()
        let limiter = makeLimiter(LoadRateLimit(loadsPerSecond: 10, burst: 1), clock: clock)
        let admissions = Admissions()
        await admitting("first", limiter, admissions).value
        // Cancelled before it asks: the cancellation handler runs before the load is queued.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                try await limiter.admit()
                admissions.record("early")
            } catch {
                admissions.record("early cancelled")
            }
        }
        await early.value
        #expect(admissions.all == ["first", "early cancelled"])
        #expect(limiter.waitingCount == 0)
    }

    @Test func waitingLoadsGoHighestPriorityFirstAndInOrderWithinOne() async {
        let clock = HandClock()
        let limiter = makeLimiter(LoadRateLimit(loadsPerSecond: 10, burst: 4), clock: clock)
        let admissions = Admissions()
        for _ in 1...4 { await admitting("first", limiter, admissions).value }  // the bucket is empty
        var tasks: [Task<Void, Never>] = []
        let waiting: [(String, LoadPriority)] = [("low", .low), ("normal 1", .normal), ("high", .high), ("normal 2", .normal)]
        for (name, priority) in waiting {
            tasks.append(admitting(name, limiter, admissions, priority: priority))
            let queued = tasks.count
            #expect(await waitUntil { limiter.waitingCount == queued })  // queued in this order
        }
        // One token per drain, so the order recorded is the order admitted (loads resumed by one
        // drain record themselves in whatever order their tasks run).
        for admitted in 5...8 {
            clock.advance(seconds: 0.1)
            limiter.drain()
            #expect(await waitUntil { admissions.all.count == admitted })
        }
        for task in tasks { await task.value }
        #expect(admissions.all.dropFirst(4) == ["high", "normal 1", "normal 2", "low"])
    }

    @Test func nonsenseLimitsAreClamped() {
        let limiter = LoadRateLimiter(LoadRateLimit(loadsPerSecond: .nan, burst: -3))
        #expect(limiter.loadsPerSecond == 1)
        #expect(limiter.burst == 1)
        #expect(LoadRateLimiter(LoadRateLimit(loadsPerSecond: -5, burst: 0)).loadsPerSecond == 1)
        #expect(LoadRateLimiter(LoadRateLimit(loadsPerSecond: 0.2, burst: 2)).loadsPerSecond == 0.2)
    }

    /// The timer path on the real clock: the waiting loads are drained without anyone calling
    /// `drain` (the verdict is that they all go; how soon is the machine's business).
    @Test func theTimerDrainsWaitingLoadsByItself() async {
        let limiter = LoadRateLimiter(LoadRateLimit(loadsPerSecond: 100, burst: 1))
        let admissions = Admissions()
        let tasks = (1...5).map { admitting("\($0)", limiter, admissions) }
        for task in tasks { await task.value }
        #expect(admissions.all.count == 5)
        #expect(limiter.waitingCount == 0)
    }
}
