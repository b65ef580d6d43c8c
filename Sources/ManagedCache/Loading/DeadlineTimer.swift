import Dispatch
import Foundation
import ManagedCacheLocking

/// Runs actions once their deadlines pass, for the whole process, on one thread of its own
/// (`MCache.timer`): the grace periods of cancelled transfers (`SessionTransfer.cancelled(grace:graceEnded:)`),
/// the moments a load rate limit has a token again (`LoadRateLimiter`) and the downloads' idle
/// timeouts (`IdleWatchdog`).
///
/// Why a thread rather than a dispatch timer: each firing of a dispatch timer runs on whichever
/// libdispatch thread is free, unnamed and outside the engine's count; this thread is the one
/// place the engine's timed work runs (see `EngineThreads`).
///
/// Why not a timer per cancellation: a transfer is cancelled in its load's cancellation handler, on
/// the thread that cancels, which is often the thread calling `manage` (a reused cell pushing its
/// previous load out). Waking another thread there often lost the caller its CPU at once:
/// scheduler traces of the `manage-latency` benchmark's measuring thread found such a wake behind
/// most of the calls that were preempted while starting a load. Here an action whose deadline is
/// no earlier than what the thread sleeps until (the usual case: every grace is as long) is only
/// inserted in a list, under a lock; the thread is woken only when the new deadline comes first.
///
///     idle ──add──▶ sleeping(earliest deadline) ──wake: run due, more pending──▶ sleeping
///                        └──────────────────wake: none pending──────────────▶ idle
final class DeadlineTimer: Sendable {
    /// The process's timer, on a thread it keeps.
    static let shared = DeadlineTimer(threadName: EngineThreads.timerName, keepsItsThread: true)

    private struct Pending {
        let deadline: DispatchTime
        let action: @Sendable () -> Void
    }

    private struct State {
        /// Ordered by deadline (appended in order when every grace is as long).
        var pending: [Pending] = []
        /// Whether the thread runs (it may be running actions, sleeping or about to).
        var hasThread = false
        /// Until when the thread sleeps: `nil` while it runs actions (it looks at `pending`
        /// again before it sleeps), `.distantFuture` while idle.
        var sleepingUntil: DispatchTime?
    }

    private let state = Lock(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let threadName: String
    /// Whether the thread stays once nothing is pending (the shared timer's), or ends.
    private let keepsItsThread: Bool

    /// A timer of its own, whose thread ends whenever nothing is pending (for the tests).
    convenience init() {
        self.init(threadName: "DeadlineTimer", keepsItsThread: false)
    }

    private init(threadName: String, keepsItsThread: Bool) {
        self.threadName = threadName
        self.keepsItsThread = keepsItsThread
    }

    /// Runs `action` on the timer's thread once `seconds` have passed.
    func run(after seconds: Double, _ action: @escaping @Sendable () -> Void) {
        let deadline = DispatchTime.now() + seconds
        enum Wake { case none, signal, start }
        let wake = state.withLock { state -> Wake in
            let index = state.pending.lastIndex { $0.deadline <= deadline }.map { $0 + 1 } ?? 0
            state.pending.insert(Pending(deadline: deadline, action: action), at: index)
            guard state.hasThread else {
                state.hasThread = true
                return .start
            }
            // The thread looks again before it sleeps, or wakes for an earlier deadline anyway.
            guard let sleepingUntil = state.sleepingUntil, deadline < sleepingUntil else { return .none }
            state.sleepingUntil = nil
            return .signal
        }
        switch wake {
        case .none: break
        case .signal: wakeUp.signal()
        case .start:
            EngineThreads.startThread(named: threadName, utility: true) { [self] in runThread() }
        }
    }

    /// Suspends the calling task for `seconds`, or until it is cancelled (then it returns at once).
    ///
    /// Why not `Task.sleep`: on Linux its wake-up runs on a libdispatch worker of the task's
    /// QoS (a global queue's), which the engine's tasks have no other use for; the soak's retries
    /// kept two such threads alive for the whole run. Here the timer's thread resumes the task,
    /// which goes back to its executor (the engine's workers).
    func sleep(seconds: Double) async {
        let wake = SleepWake()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                guard wake.set(continuation) else { return }  // cancelled already: resumed
                run(after: seconds) { wake.resume() }
            }
        } onCancel: {
            wake.resume()
        }
    }

    /// Actions waiting for their deadlines (for the tests).
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Runs what is due, then sleeps until the next deadline, until nothing is pending (the
    /// shared timer's thread then waits for the next action instead of ending).
    private func runThread() {
        while true {
            let (due, next) = state.withLock { state -> ([Pending], DispatchTime?) in
                let now = DispatchTime.now()
                let count = state.pending.firstIndex { $0.deadline > now } ?? state.pending.count
                let due = Array(state.pending.prefix(count))
                state.pending.removeFirst(count)
                guard due.isEmpty else { return (due, nil) }  // run them, then look again
                if let next = state.pending.first {
                    state.sleepingUntil = next.deadline
                    return ([], next.deadline)
                }
                if !keepsItsThread {
                    state.hasThread = false
                    return ([], nil)
                }
                state.sleepingUntil = .distantFuture
                return ([], .distantFuture)
            }
            if !due.isEmpty {
                for pending in due { pending.action() }
                continue
            }
            guard let next else { return }
            // A signal left over from a wake that crossed a timeout only makes one more pass.
            _ = wakeUp.wait(timeout: next)
            state.withLock { $0.sleepingUntil = nil }
        }
    }
}

/// The continuation of one `DeadlineTimer.sleep(seconds:)`, resumed once: by the deadline or by
/// the cancellation, whichever comes first (the cancellation may come before the continuation).
private final class SleepWake: Sendable {
    private enum State {
        case waiting
        case suspended(CheckedContinuation<Void, Never>)
        case resumed
    }

    private let state = Lock(State.waiting)

    /// Keeps `continuation`; `false` (and resumes it) when the sleep was cancelled already.
    func set(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        let resumed = state.withLock { state -> Bool in
            guard case .waiting = state else { return true }
            state = .suspended(continuation)
            return false
        }
        if resumed { continuation.resume() }
        return !resumed
    }

    /// Resumes the sleeping task unless it has been resumed.
    func resume() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .resumed }
            guard case .suspended(let continuation) = state else { return nil }
            return continuation
        }
        continuation?.resume()
    }
}
