import Dispatch
import ManagedCacheLocking

/// Runs actions once their deadlines pass, for the whole process, on one dispatch timer: the
/// grace periods of cancelled transfers (`SessionTransfer.cancelled(grace:graceEnded:)`) and the
/// moments a load rate limit has a token again (`LoadRateLimiter`).
///
/// Why not `asyncAfter` per cancellation: a transfer is cancelled in its load's cancellation
/// handler, on the thread that cancels, which is often the thread calling `manage` (a reused cell
/// pushing its previous load out). On Linux each `asyncAfter` registers a timer with dispatch's
/// event thread and wakes it, and the woken thread often took the CPU from the caller at once:
/// scheduler traces of the `manage-latency` benchmark's measuring thread found this
/// wake behind most of the calls that were preempted while starting a load. Here an action whose
/// deadline is no earlier than the timer's next firing (the usual case: every grace is as long)
/// is only appended to a list, under a lock (a rate limit's earlier deadlines are
/// inserted before the later ones); the timer is armed or moved only when it is idle or
/// the new deadline comes first, and it re-arms itself from its own queue.
///
///     idle ──add──▶ armed(earliest deadline) ──fire: run due, more pending──▶ armed
///                        └───────────────────fire: none pending───────────▶ idle
final class DeadlineTimer: Sendable {
    /// The process's timer.
    static let shared = DeadlineTimer()

    private struct Pending {
        let deadline: DispatchTime
        let action: @Sendable () -> Void
    }

    private struct State {
        /// Ordered by deadline (appended in order when every grace is as long).
        var pending: [Pending] = []
        var timer: DispatchSourceTimer?
        /// When the timer fires next, while it is armed.
        var armedFor: DispatchTime?
    }

    private let state = Lock(State())
    private let queue = DispatchQueue(label: "ManagedCache.deadline-timer", qos: .utility)

    /// Runs `action` on the timer's queue once `seconds` have passed.
    func run(after seconds: Double, _ action: @escaping @Sendable () -> Void) {
        let deadline = DispatchTime.now() + seconds
        state.withLock { state in
            let index = state.pending.lastIndex { $0.deadline <= deadline }.map { $0 + 1 } ?? 0
            state.pending.insert(Pending(deadline: deadline, action: action), at: index)
            if let armedFor = state.armedFor, armedFor <= deadline { return }  // the timer comes first anyway
            _arm(for: deadline, in: &state)
        }
    }

    /// Actions waiting for their deadlines (for the tests).
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Points the timer at `deadline`, creating it the first time.
    private func _arm(for deadline: DispatchTime, in state: inout State) {
        state.armedFor = deadline
        if let timer = state.timer {
            timer.schedule(deadline: deadline, leeway: .milliseconds(10))
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.schedule(deadline: deadline, leeway: .milliseconds(10))
        timer.resume()
        state.timer = timer
    }

    /// Runs what is due, then re-arms for the next deadline, if any.
    private func fire() {
        let due = state.withLock { state -> [Pending] in
            let now = DispatchTime.now()
            let count = state.pending.firstIndex { $0.deadline > now } ?? state.pending.count
            let due = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            if let next = state.pending.first {
                _arm(for: next.deadline, in: &state)
            } else {
                state.armedFor = nil  // the one-shot timer stays resumed, unarmed, until the next `run`
            }
            return due
        }
        for pending in due { pending.action() }
    }
}
