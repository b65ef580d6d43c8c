import Dispatch
import Foundation
import ManagedCacheLocking

/// Stops downloads that received nothing for longer than their timeout: one timer for the whole
/// process instead of a sleeping timer task beside every download.
///
/// Why: a timer task per load added a task group and two thread hops to every download, and a
/// cancelled `Task.sleep` keeps its memory until its deadline (30 s by default), so every load of
/// the last 30 s stayed in memory. It ticks every 50 ms on the engine's timer thread
/// (`DeadlineTimer.shared`), and only while downloads run.
final class IdleWatchdog: Sendable {
    /// The process-wide watchdog.
    static let shared = IdleWatchdog()

    private struct Watched {
        let receiver: FetchReceiver
        let timeout: Double
        let stop: @Sendable () -> Void
    }

    private struct State {
        var watched: [UInt64: Watched] = [:]
        var nextIdentifier: UInt64 = 0
        /// Whether the next tick is queued on the timer.
        var ticking = false
    }

    private let state = Lock(State())
    private let timer: DeadlineTimer
    private static let tick = 0.05

    init(timer: DeadlineTimer = .shared) {
        self.timer = timer
    }

    /// Watches `receiver`: if it reports no activity for `timeout` seconds, it is marked timed out
    /// and `stop` is called. Returns a token for `unwatch`.
    func watch(_ receiver: FetchReceiver, timeout: Double, stop: @escaping @Sendable () -> Void) -> UInt64 {
        let (token, startsTicking) = state.withLock { state -> (UInt64, Bool) in
            state.nextIdentifier &+= 1
            state.watched[state.nextIdentifier] = Watched(receiver: receiver, timeout: timeout, stop: stop)
            defer { state.ticking = true }
            return (state.nextIdentifier, !state.ticking)
        }
        if startsTicking { timer.run(after: Self.tick) { [weak self] in self?.check() } }
        return token
    }

    /// Stops watching (the download ended). The ticks stop at the next one that finds nothing watched.
    func unwatch(_ token: UInt64) {
        _ = state.withLock { $0.watched.removeValue(forKey: token) }
    }

    private func check() {
        let (expired, ticksAgain) = state.withLock { state -> ([Watched], Bool) in
            let expired = state.watched.filter { $0.value.receiver.secondsSinceLastActivity() >= $0.value.timeout }
            for token in expired.keys { state.watched.removeValue(forKey: token) }
            state.ticking = !state.watched.isEmpty
            return (Array(expired.values), state.ticking)
        }
        if ticksAgain { timer.run(after: Self.tick) { [weak self] in self?.check() } }
        for watched in expired {
            watched.receiver.markTimedOut()
            watched.stop()
        }
    }
}
