import Dispatch
import Foundation
import ManagedCacheLocking

/// Stops downloads that received nothing for longer than their timeout: one timer for the whole
/// process instead of a sleeping timer task beside every download.
///
/// Why: a timer task per load added a task group and two thread hops to every download, and a
/// cancelled `Task.sleep` keeps its memory until its deadline (30 s by default), so every load of
/// the last 30 s stayed in memory. The timer ticks every 50 ms, and only while downloads run.
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
        var timer: DispatchSourceTimer?
    }

    private let state = Lock(State())
    private let queue = DispatchQueue(label: "ManagedCache.idle-watchdog", qos: .utility)
    private static let tick = DispatchTimeInterval.milliseconds(50)

    /// Watches `receiver`: if it reports no activity for `timeout` seconds, it is marked timed out
    /// and `stop` is called. Returns a token for `unwatch`.
    func watch(_ receiver: FetchReceiver, timeout: Double, stop: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            state.nextIdentifier &+= 1
            state.watched[state.nextIdentifier] = Watched(receiver: receiver, timeout: timeout, stop: stop)
            if state.timer == nil {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + Self.tick, repeating: Self.tick, leeway: .milliseconds(10))
                timer.setEventHandler { [weak self] in self?.check() }
                timer.resume()
                state.timer = timer
            }
            return state.nextIdentifier
        }
    }

    /// Stops watching (the download ended).
    func unwatch(_ token: UInt64) {
        let idleTimer = state.withLock { state -> DispatchSourceTimer? in
            state.watched.removeValue(forKey: token)
            guard state.watched.isEmpty, let timer = state.timer else { return nil }
            state.timer = nil
            return timer
        }
        idleTimer?.cancel()
    }

    private func check() {
        let expired = state.withLock { state -> [Watched] in
            let expired = state.watched.filter { $0.value.receiver.secondsSinceLastActivity() >= $0.value.timeout }
            for token in expired.keys { state.watched.removeValue(forKey: token) }
            return Array(expired.values)
        }
        for watched in expired {
            watched.receiver.markTimedOut()
            watched.stop()
        }
    }
}
