import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// The failure memory backs off exponentially: a short first refusal, doubled after
/// each further failure in a row, capped; a success or an explicit retry starts over.
@Suite struct FailureBackoffTests {
    private static let gone = ManagedCacheError.httpStatus(code: 404)

    private static func policy(first: Double, maximum: Double) -> LoadPolicy {
        var policy = LoadPolicy()
        policy.failureMemoryFirstInterval = first
        policy.failureMemoryInterval = maximum
        return policy
    }

    @Test func theIntervalDoublesFromTheFirstUpToTheCap() {
        let intervals = (1...8).map { FailureMemory.interval(afterFailures: $0, first: 5, maximum: 600) }
        #expect(intervals == [5, 10, 20, 40, 80, 160, 320, 600])
        #expect(FailureMemory.interval(afterFailures: 1, first: 900, maximum: 600) == 600)
        #expect(FailureMemory.interval(afterFailures: 3, first: 0, maximum: 600) == 600)
        #expect(FailureMemory.interval(afterFailures: 10_000, first: 5, maximum: 600) == 600)
    }

    /// The hint `manage` reads before the lock follows what the failure memory records: a key
    /// refused until its interval ends (its bytes' failures and its objects' alike), no other
    /// key; past `RefusalHints.limit` keys, it forgets rather than grows.
    @Test func theRefusalHintsFollowTheFailuresRecorded() {
        var memory = FailureMemory()
        let policy = Self.policy(first: 2, maximum: 600)
        let start = MonotonicInstant(nanoseconds: 1_000_000_000)
        memory.record(Self.gone, forDataKey: "bytes", policy: policy, now: start)
        memory.record(.decodingFailed(reason: "test"), for: ObjectKey(dataKey: "object", variant: "v"), policy: policy, now: start)
        memory.record(.transport(code: -1005, description: "reset"), forDataKey: "transient", policy: policy, now: start)  // not permanent
        let hints = memory.hints
        #expect(hints.mayRefuse("bytes", now: start.adding(seconds: 1)))
        #expect(hints.mayRefuse("object", now: start.adding(seconds: 1)))
        #expect(!hints.mayRefuse("transient", now: start.adding(seconds: 1)))
        #expect(!hints.mayRefuse("other", now: start.adding(seconds: 1)))
        #expect(!hints.mayRefuse("bytes", now: start.adding(seconds: 3)))
        // The bytes refused for long, then an object of them for less: still refused until the
        // bytes' refusal ends.
        hints.note("both", refusedUntil: start.adding(seconds: 8), now: start)
        hints.note("both", refusedUntil: start.adding(seconds: 2), now: start)
        #expect(hints.mayRefuse("both", now: start.adding(seconds: 5)))
        #expect(!hints.mayRefuse("both", now: start.adding(seconds: 9)))
        let later = start.adding(seconds: 10)
        for index in 0...RefusalHints.limit { hints.note("key\(index)", refusedUntil: later.adding(seconds: 1), now: later) }
        #expect(!hints.mayRefuse("key0", now: later))  // all forgotten: more than half were still refused
        hints.note("last", refusedUntil: later.adding(seconds: 1), now: later)
        #expect(hints.mayRefuse("last", now: later))
    }

    @Test func aKeyIsRefusedForTheFirstIntervalThenTwiceAsLong() {
        var memory = FailureMemory()
        let policy = Self.policy(first: 5, maximum: 600)
        let start = MonotonicInstant.now
        memory.record(Self.gone, forDataKey: "a", policy: policy, now: start)
        #expect(memory.failure(forDataKey: "a", now: start.adding(seconds: 4.9)) == Self.gone)
        #expect(memory.failure(forDataKey: "a", now: start.adding(seconds: 5.1)) == nil)
        // It fails again when retried: refused for 10 s this time.
        let second = start.adding(seconds: 5.1)
        memory.record(Self.gone, forDataKey: "a", policy: policy, now: second)
        #expect(memory.failure(forDataKey: "a", now: second.adding(seconds: 9.9)) == Self.gone)
        #expect(memory.failure(forDataKey: "a", now: second.adding(seconds: 10.1)) == nil)
    }

    @Test func aSuccessStartsTheBackoffOver() {
        var memory = FailureMemory()
        let policy = Self.policy(first: 5, maximum: 600)
        let key = ObjectKey(dataKey: "a", variant: "v")
        let start = MonotonicInstant.now
        memory.record(Self.gone, forDataKey: "a", policy: policy, now: start)
        memory.record(Self.gone, forDataKey: "a", policy: policy, now: start)
        memory.succeeded(key)
        #expect(memory.failure(for: key, now: start) == nil)
        memory.record(Self.gone, forDataKey: "a", policy: policy, now: start)
        #expect(memory.failure(for: key, now: start.adding(seconds: 5.1)) == nil)
    }

    @Test func transientFailuresAreNotRemembered() {
        var memory = FailureMemory()
        memory.record(.httpStatus(code: 503), forDataKey: "a", policy: Self.policy(first: 5, maximum: 600))
        #expect(memory.failure(forDataKey: "a") == nil)
    }

    /// Through a manager, on a clock the test steps: refused for the first interval, asked again
    /// after it, refused twice as long after failing again, and a success starts over.
    @Test func aManagerAsksAgainAfterTheFirstIntervalAndBacksOff() async {
        let loader = ScriptedDataLoader()
        loader.script("flaky", .failure(Self.gone))
        let clock = Lock(MonotonicInstant.now)
        let manager = makeScriptedManager(loader: loader) {
            $0.policy.failureMemoryFirstInterval = 5
            $0.policy.failureMemoryInterval = 600
            $0.failureClock = { clock.withLock { $0 } }
        }
        func step(_ seconds: Double) { clock.withLock { $0 = $0.adding(seconds: seconds) } }
        let user = RecordingUser(request("flaky"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors == [Self.gone] })
        step(4.9)
        manager.manage(user)
        #expect(user.errors.last == .recentlyFailed(Self.gone))
        #expect(loader.requestCount("flaky") == 1)

        step(0.2)  // 5.1 s after the first failure: asked again, and it fails again
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 3 })
        #expect(user.errors.last == Self.gone)
        #expect(loader.requestCount("flaky") == 2)
        step(9.9)  // refused for 10 s this time
        manager.manage(user)
        #expect(user.errors.last == .recentlyFailed(Self.gone))
        #expect(loader.requestCount("flaky") == 2)

        loader.script("flaky", .body(Data("back".utf8)))
        step(0.2)
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(loader.requestCount("flaky") == 3)

        // The success started the backoff over: a new failure is refused for 5 s again, not 20.
        loader.script("flaky", .failure(Self.gone))
        manager.unmanage(user)
        manager.removeObject(for: request("flaky"), decoder: BlobDecoder())
        let next = RecordingUser(request("flaky"), decoder: BlobDecoder())
        manager.manage(next)
        #expect(await waitUntil { next.errors == [Self.gone] })
        step(5.1)
        manager.manage(next)
        #expect(await waitUntil { loader.requestCount("flaky") == 5 })
    }
}
