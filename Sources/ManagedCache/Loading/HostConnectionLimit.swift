import Foundation
import ManagedCacheLocking

/// Admits at most `limit` loads per host at once; the others wait, highest priority first and
/// first come first served within one priority (the priority is read when a slot frees, so a load
/// raised while it waits goes ahead).
///
/// Why: `URLSession` opens at most `httpMaximumConnectionsPerHost` connections to a host and
/// queues the tasks beyond them where nobody can see. The manager's idle timeout would count
/// that wait as silence and time out loads that never reached the server. With this gate in
/// front of the session, every task the loader creates has a connection to go on, and the
/// loader tells its receiver when the wait ends, so the idle timeout counts only from there.
///
/// A host is the URL's lowercased host name and port (what `URLSession` counts connections by:
/// `127.0.0.1` and `localhost` are two hosts). Waiting ends when a running load of the same host
/// ends, which it does: it either progresses, or the idle timeout stops it.
final class HostConnectionLimit: Sendable {
    private struct Host {
        var running = 0
        var waiting = PriorityWaitQueue()
    }

    private struct State {
        var hosts: [String: Host] = [:]
        var nextIdentifier: UInt64 = 0
        /// Waits cancelled before they were queued (the cancellation handler ran first).
        var cancelledEarly: Set<UInt64> = []
    }

    /// The most loads of one host admitted at once.
    let limit: Int
    private let state = Lock(State())

    /// Creates a gate admitting `limit` loads per host (at least 1).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The key `url` is counted under.
    static func hostKey(for url: URL) -> String {
        let host = url.host?.lowercased() ?? ""
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return "\(host):\(port)"
    }

    /// Returns at once when fewer than `limit` loads of `host` run, else (after calling
    /// `willWait`) when one of them ends. Throws `CancellationError` when the calling task is
    /// cancelled while waiting. Every call that returns must be balanced by `release(_:)`.
    func acquire(
        _ host: String, priority: @escaping @Sendable () -> LoadPriority = { .normal }, willWait: () -> Void
    ) async throws {
        let identifier = state.withLock { state -> UInt64? in
            if state.hosts[host, default: Host()].running < limit {
                state.hosts[host, default: Host()].running += 1
                return nil
            }
            state.nextIdentifier &+= 1
            return state.nextIdentifier
        }
        guard let identifier else { return }
        willWait()
        try await PriorityWaitQueue.wait(
            identifier: identifier, priority: priority,
            enqueue: { waiter in
                state.withLock { state in
                    if state.cancelledEarly.remove(identifier) != nil { return .cancelled }
                    // A load may have ended between the first look and now.
                    if state.hosts[host, default: Host()].running < limit {
                        state.hosts[host, default: Host()].running += 1
                        return .admitted
                    }
                    state.hosts[host, default: Host()].waiting.append(waiter)
                    return .queued
                }
            },
            withdraw: { [state] identifier in
                state.withLock { state in
                    // Not queued yet (or already admitted: then `forget` drops the mark).
                    guard let waiter = state.hosts[host]?.waiting.remove(identifier) else {
                        state.cancelledEarly.insert(identifier)
                        return nil
                    }
                    return waiter
                }
            },
            forget: { identifier in state.withLock { _ = $0.cancelledEarly.remove(identifier) } })
    }

    /// Ends one admitted load of `host`, admitting the next waiting one.
    func release(_ host: String) {
        let next = state.withLock { state -> PriorityWaitQueue.Waiter? in
            guard var entry = state.hosts[host] else { return nil }
            // The slot passes straight to the waiter of the highest priority: `running` stays the same.
            guard let next = entry.waiting.removeHighestPriority() else {
                entry.running -= 1
                state.hosts[host] = entry.running > 0 ? entry : nil
                return nil
            }
            state.hosts[host] = entry
            return next
        }
        next?.continuation.resume()
    }

    /// Loads running and waiting for `host` (for tests and diagnostics).
    func counts(for host: String) -> (running: Int, waiting: Int) {
        state.withLock { state in
            let entry = state.hosts[host]
            return (entry?.running ?? 0, entry?.waiting.count ?? 0)
        }
    }
}
