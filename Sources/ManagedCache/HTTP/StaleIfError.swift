import Foundation

/// Whether a stale cached response may be delivered in place of a failed revalidation
/// ("stale-if-error"): one pure decision, so every path that falls back decides alike.
///
/// The rules, in the order they are checked:
/// 1. Only an *error* in RFC 5861's sense is covered: the network failed (no connection, refused,
///    reset, lost, timed out, a server stalled past the idle timeout) or the server answered
///    500, 502, 503 or 504 ("any situation that would result in a 500, 502, 503, or 504 HTTP
///    response status code being returned"). Any other status the server sent (a 404, a 408, a
///    429, a 501) is its answer and is never hidden; a cancelled load or an undecodable body is
///    not a failed revalidation.
/// 2. `must-revalidate` and `no-cache` responses are never shown stale (RFC 9111, sections 4.2.4,
///    5.2.2.2 and 5.2.2.4: such a response is reused only once the origin validated it, and a
///    disconnected cache answers with an error instead).
/// 3. ``StaleIfErrorPolicy/never`` turns the fallback off.
/// 4. The copy may be at most as stale as the response's `stale-if-error=N` allows, or, where it
///    set none, the policy's default maximum (none by default).
enum StaleIfError {
    /// What to do with a failed revalidation.
    enum Decision: Sendable, Hashable {
        /// Deliver the stale copy.
        case deliverStale
        /// Deliver the failure, for this reason.
        case deliverFailure(Refusal)
    }

    /// Why the stale copy is not delivered.
    enum Refusal: Sendable, Hashable {
        /// The failure is not one stale-if-error covers (a status other than 500/502/503/504,
        /// a cancellation, a rejected body).
        case notAnError
        /// The response said `must-revalidate` or `no-cache`.
        case mustRevalidate
        /// ``StaleIfErrorPolicy/never``.
        case turnedOff
        /// The copy is staler than the response's `stale-if-error` or the policy's maximum.
        case tooStale
    }

    /// Decides whether the copy described by `freshness` is delivered after `failure`.
    ///
    /// - Parameters:
    ///   - freshness: The cached copy's freshness (from its file-cache entry or memory-cache value).
    ///   - failure: Why revalidating it failed.
    ///   - now: The moment of the failure; the copy's staleness is how far it is past
    ///     ``HTTPFreshness/freshUntil`` (0 for a copy with no expiry, or not yet expired).
    ///   - policy: The load's policy: its ``LoadPolicy/staleIfError``.
    static func decide(freshness: HTTPFreshness, failure: ManagedCacheError, now: Date, policy: LoadPolicy) -> Decision {
        guard isError(failure) else { return .deliverFailure(.notAnError) }
        if freshness.mustRevalidate { return .deliverFailure(.mustRevalidate) }
        let maximumStaleness: Double?
        switch policy.staleIfError {
        case .never:
            return .deliverFailure(.turnedOff)
        case .fromServer(let defaultMaximum):
            maximumStaleness = freshness.staleIfError ?? defaultMaximum
        }
        guard let maximumStaleness else { return .deliverStale }
        let staleness = freshness.freshUntil.map { max(0, now.timeIntervalSince($0)) } ?? 0
        return staleness <= maximumStaleness ? .deliverStale : .deliverFailure(.tooStale)
    }

    /// Whether `failure` is an error in RFC 5861's sense: the network failed, or the server
    /// answered 500, 502, 503 or 504.
    static func isError(_ failure: ManagedCacheError) -> Bool {
        switch failure {
        case .transport, .timedOut:
            return true
        case .httpStatus(let code):
            return [500, 502, 503, 504].contains(code)
        case .invalidRequest, .tooLarge, .decodingFailed, .cancelled, .recentlyFailed:
            return false
        }
    }
}
