import ManagedCacheLocking

/// Counts and remembers the requests a server received, and counts the body bytes it sent.
///
/// Requests are counted by path (without the query) and, when they had a query, also by full
/// target (`/a?v=2`). The last `recordLimit` requests of each path are kept for inspection;
/// older ones are dropped so memory stays bounded under benchmarks.
final class RequestStatistics: Sendable {
    /// How many requests per path `recordedRequests(for:)` can return.
    let recordLimit: Int

    init(recordLimit: Int) {
        self.recordLimit = recordLimit
    }

    private struct PathRecord {
        var count = 0
        /// Holds up to twice the limit; trimmed to the limit when full (amortised O(1) appends).
        var requests: [LoopbackRequest] = []

        /// Caller holds the statistics lock.
        mutating func _append(_ request: LoopbackRequest, limit: Int) {
            count += 1
            guard limit > 0 else { return }
            if requests.count >= 2 * limit { requests.removeFirst(requests.count - limit) }
            requests.append(request)
        }
    }

    private struct State {
        var paths: [String: PathRecord] = [:]
        var targetCounts: [String: Int] = [:]
    }

    private let state = Lock(State())
    private let total = Lock<Int>(0)
    private let bodyBytes = Lock<Int>(0)
    private let headBytes = Lock<Int>(0)
    private let accepted = Lock<Int>(0)

    /// Counts and records `request`.
    func record(_ request: LoopbackRequest) {
        total.withLock { $0 += 1 }
        state.withLock { state in
            state.paths[request.path, default: PathRecord()]._append(request, limit: recordLimit)
            if !request.query.isEmpty { state.targetCounts[request.target, default: 0] += 1 }
        }
    }

    /// Adds `count` to the body bytes sent.
    func addBodyBytes(_ count: Int) {
        guard count > 0 else { return }
        bodyBytes.withLock { $0 += count }
    }

    /// Adds `count` to the response-head bytes sent (status line and headers).
    func addHeadBytes(_ count: Int) {
        headBytes.withLock { $0 += count }
    }

    /// Counts one accepted connection.
    func addAcceptedConnection() {
        accepted.withLock { $0 += 1 }
    }

    /// Requests for `path`; with a `?query`, only those with exactly that query.
    func count(for path: String) -> Int {
        state.withLock { state in
            path.contains("?") ? state.targetCounts[path, default: 0] : state.paths[path]?.count ?? 0
        }
    }

    /// The last (up to `recordLimit`) requests for `path`, oldest first; with a `?query`,
    /// only those with exactly that query.
    func recordedRequests(for path: String) -> [LoopbackRequest] {
        let (bare, query) = Self.split(path)
        let requests = state.withLock { state in
            Array((state.paths[bare]?.requests ?? []).suffix(recordLimit))
        }
        guard let query else { return requests }
        return requests.filter { $0.query == query }
    }

    /// All requests received.
    var totalCount: Int { total.withLock { $0 } }

    /// All body bytes written.
    var bodyBytesSent: Int { bodyBytes.withLock { $0 } }

    /// All response-head bytes written (status lines and headers).
    var headBytesSent: Int { headBytes.withLock { $0 } }

    /// All connections accepted.
    var acceptedConnections: Int { accepted.withLock { $0 } }

    /// Forgets every count and record.
    func reset() {
        state.withLock { $0 = State() }
        total.withLock { $0 = 0 }
        bodyBytes.withLock { $0 = 0 }
        headBytes.withLock { $0 = 0 }
        accepted.withLock { $0 = 0 }
    }

    private static func split(_ target: String) -> (path: String, query: String?) {
        guard let mark = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }
}
