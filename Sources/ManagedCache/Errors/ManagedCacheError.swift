import Foundation

/// Why a load did not produce an object. Every failure a user or an `await` caller sees is one of
/// these cases, so code can react to the reason (show a "not found" image for `.httpStatus(404)`,
/// retry later after `.timedOut`, say nothing after `.cancelled`).
///
/// The `async` methods throw it in their type (`throws(ManagedCacheError)`), so a `catch` can
/// match a case without a cast:
///
/// ```swift
/// // Assumes `manager` (an ObjectManager), `feedURL` (a URL) and `Feed` (a Decodable model with a title).
/// do {
///     let feed = try await manager.object(for: ObjectRequest(url: feedURL), decoder: JSONObjectDecoder<Feed>())
///     print(feed.title)
/// } catch .httpStatus(let code) {
///     print("the server said \(code)")
/// } catch {
///     print("no feed: \(error)")
/// }
/// ```
public enum ManagedCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request cannot be loaded at all: a URL without a scheme or host, a scheme no loader
    /// handles, an empty key. Never retried.
    case invalidRequest(reason: String)
    /// The server answered with a status outside 200–299. The body is never cached.
    case httpStatus(code: Int)
    /// The connection failed: refused, reset, lost, a body shorter than its `Content-Length`, too
    /// many redirects. `code` is the `URLError` code (or `errno` for file loads).
    case transport(code: Int, description: String)
    /// No byte arrived for longer than the policy's timeout.
    case timedOut(seconds: Double)
    /// The body grew past the policy's maximum size; the download was stopped there.
    case tooLarge(limit: Int)
    /// The bytes arrived but the user's decoder rejected them. The raw data is purged from every cache.
    case decodingFailed(reason: String)
    /// The load was stopped before it finished; `reason` says who stopped it.
    case cancelled(CancellationReason)
    /// The key failed recently with a permanent error and is not requested again until the
    /// failure memory's interval passes or the caller asks for a retry (`ObjectManager.forgetFailure`).
    indirect case recentlyFailed(ManagedCacheError)

    /// Who or what stopped a load.
    public enum CancellationReason: String, Sendable, Hashable {
        /// Newer loads pushed this one out of the manager's bounded loading buffer (the user
        /// scrolled past it). Managing the user again restarts the load.
        case loadingBufferOverflow
        /// Every user of the object went away and the policy says not to finish such loads.
        case noUsers
        /// The caller asked: `unmanage`, Swift task cancellation, `cancelPrefetching`.
        case caller
        /// The manager was deallocated or `cancelAll()` was called.
        case managerShutDown
    }

    /// True for failures that will not change if the same request is sent again soon
    /// (4xx except 408/429, undecodable data, invalid requests, oversize bodies). The manager's
    /// failure memory blocks such keys for a while; transient failures are retried with backoff.
    public var isPermanent: Bool {
        switch self {
        case .invalidRequest, .decodingFailed, .tooLarge:
            return true
        case .httpStatus(let code):
            return (400..<500).contains(code) && code != 408 && code != 429
        case .recentlyFailed(let underlying):
            return underlying.isPermanent
        case .transport, .timedOut, .cancelled:
            return false
        }
    }

    /// True for failures worth retrying automatically: timeouts, connection errors, 5xx, 408, 429.
    public var isTransient: Bool {
        switch self {
        case .transport, .timedOut:
            return true
        case .httpStatus(let code):
            return code >= 500 || code == 408 || code == 429
        default:
            return false
        }
    }

    /// The statistics bucket this failure is counted in.
    public var kind: FailureKind {
        switch self {
        case .invalidRequest: return .invalidRequest
        case .httpStatus: return .httpStatus
        case .transport: return .transport
        case .timedOut: return .timedOut
        case .tooLarge: return .tooLarge
        case .decodingFailed: return .decoding
        case .cancelled: return .cancelled
        case .recentlyFailed: return .recentlyFailed
        }
    }

    /// A one-line description for logs, such as `HTTP status 404` or `cancelled (loadingBufferOverflow)`.
    public var description: String {
        switch self {
        case .invalidRequest(let reason): return "invalid request: \(reason)"
        case .httpStatus(let code): return "HTTP status \(code)"
        case .transport(let code, let description): return "transport error \(code): \(description)"
        case .timedOut(let seconds): return "timed out after \(seconds) s without data"
        case .tooLarge(let limit): return "body larger than the \(limit)-byte limit"
        case .decodingFailed(let reason): return "decoding failed: \(reason)"
        case .cancelled(let reason): return "cancelled (\(reason.rawValue))"
        case .recentlyFailed(let underlying): return "failed recently, not retried yet: \(underlying)"
        }
    }
}

/// The buckets ``ManagerStatistics/failures`` counts failures in: one per case of
/// ``ManagedCacheError`` (its ``ManagedCacheError/kind``).
public enum FailureKind: String, Sendable, Hashable, CaseIterable {
    /// ``ManagedCacheError/invalidRequest(reason:)``: nothing could be loaded.
    case invalidRequest
    /// ``ManagedCacheError/httpStatus(code:)``: a status outside 200–299.
    case httpStatus
    /// ``ManagedCacheError/transport(code:description:)``: the connection failed.
    case transport
    /// ``ManagedCacheError/timedOut(seconds:)``: the load was silent for too long.
    case timedOut
    /// ``ManagedCacheError/tooLarge(limit:)``: the body grew past the size limit.
    case tooLarge
    /// ``ManagedCacheError/decodingFailed(reason:)``: the decoder rejected the bytes.
    case decoding
    /// ``ManagedCacheError/cancelled(_:)``: the load was stopped.
    case cancelled
    /// ``ManagedCacheError/recentlyFailed(_:)``: answered from the failure memory, without a request.
    case recentlyFailed
}
