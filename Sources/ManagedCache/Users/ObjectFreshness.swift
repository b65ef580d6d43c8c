/// Whether a delivered object is known to be current: told beside its ``DataOrigin`` (so a
/// `switch` over the origin stays as it is), to users that implement
/// ``ManagedObjectUser/managedObjectReady(_:origin:freshness:request:)``, and kept by
/// ``ObjectUser/freshness``.
///
/// An object is `.stale` when its HTTP freshness has run out and the server has not confirmed it:
/// shown at once while a revalidation runs (``LoadPolicy/staleWhileRevalidate``), or shown because
/// the revalidation failed (stale-if-error, ``LoadPolicy/staleIfError``: offline, a timeout, a
/// `5xx`). An app can then say "may be out of date". The next load of the key revalidates again.
public enum ObjectFreshness: Sendable, Hashable {
    /// Fresh, new, confirmed by the server, or not from HTTP at all.
    case current
    /// Past its freshness and not confirmed. `revalidationError` is why it could not be
    /// revalidated (stale-if-error); `nil` while a revalidation is still under way
    /// (stale-while-revalidate: a newer object follows if the server has one).
    case stale(revalidationError: ManagedCacheError?)

    /// Whether the object may be out of date.
    public var isStale: Bool {
        if case .stale = self { return true }
        return false
    }
}

extension ObjectFreshness: CustomStringConvertible {
    /// For logs: `current`, `stale (revalidating)` or `stale (revalidation failed: HTTP status 503)`.
    public var description: String {
        switch self {
        case .current: return "current"
        case .stale(revalidationError: nil): return "stale (revalidating)"
        case .stale(revalidationError: let error?): return "stale (revalidation failed: \(error))"
        }
    }
}
