import Foundation

/// How long a cached object stays fresh and how to revalidate it: kept beside each object in the
/// memory cache and in each file-cache entry's metadata.
public struct HTTPFreshness: Sendable, Hashable {
    /// Until when the object is fresh; `nil`: no expiry of its own.
    public var freshUntil: Date?
    /// The response's `ETag`.
    public var etag: String?
    /// The response's `Last-Modified`.
    public var lastModified: String?
    /// `must-revalidate` or `no-cache`: never used stale (no stale-while-revalidate, no stale-if-error).
    public var mustRevalidate: Bool
    /// The response's `stale-if-error` in seconds (RFC 5861): how long past ``freshUntil`` the
    /// object may still be shown when revalidating it fails. `nil`: the response set none, and
    /// ``LoadPolicy/staleIfError`` decides.
    public var staleIfError: Double?
    /// How long the response was fresh for when it arrived (its `max-age` less its `Age`, or its
    /// `Expires` less its `Date`), in seconds; `nil`: not known. A `304` that repeats neither
    /// `Cache-Control` nor `Expires` makes the stored response fresh for this long again
    /// (RFC 9111, sections 4.2 and 4.3.4): without it, a `max-age=0` entry revalidated once would
    /// count as fresh for good.
    var lifetime: Double?

    /// Creates a freshness record.
    ///
    /// - Parameters:
    ///   - freshUntil: Until when the object is fresh. Default `nil`: no expiry of its own.
    ///   - etag: The response's `ETag`. Default `nil`.
    ///   - lastModified: The response's `Last-Modified`. Default `nil`.
    ///   - mustRevalidate: Whether the object may never be used stale. Default `false`.
    ///   - staleIfError: The response's `stale-if-error` in seconds. Default `nil`: it set none.
    public init(
        freshUntil: Date? = nil, etag: String? = nil, lastModified: String? = nil, mustRevalidate: Bool = false,
        staleIfError: Double? = nil
    ) {
        self.freshUntil = freshUntil
        self.etag = etag
        self.lastModified = lastModified
        self.mustRevalidate = mustRevalidate
        self.staleIfError = staleIfError
    }

    /// Tells whether the object needs revalidation.
    ///
    /// - Parameters:
    ///   - now: The moment to judge at. Default: now.
    ///   - policy: The request's freshness policy; ``FreshnessPolicy/neverRevalidate`` is never stale.
    /// - Returns: `true` when ``freshUntil`` is set and not after `now`.
    public func isStale(at now: Date = Date(), policy: FreshnessPolicy) -> Bool {
        if case .neverRevalidate = policy { return false }
        guard let freshUntil else { return false }
        return freshUntil <= now
    }

    /// Whether a conditional request can be made.
    public var hasValidators: Bool { etag != nil || lastModified != nil }

    /// The conditional request headers for these validators.
    var conditionalHeaders: [String: String] {
        var headers: [String: String] = [:]
        if let etag { headers["If-None-Match"] = etag }
        if let lastModified { headers["If-Modified-Since"] = lastModified }
        return headers
    }

    /// Freshness from a response's headers, received at `receivedAt`, keeping what `previous` had
    /// that the response does not repeat: a `304` may omit the validators, and one without
    /// `Cache-Control` leaves the stored directives in force (RFC 9111, section 4.3.4).
    init(response: DataLoadResponse, receivedAt: Date, policy: FreshnessPolicy, previous: HTTPFreshness? = nil) {
        let directives = HTTPCacheDirectives(headers: response.headers)
        let repeatsDirectives = response.header("cache-control") != nil || previous == nil
        let repeatsExpiry = repeatsDirectives || response.header("expires") != nil
        let freshUntil: Date?
        let lifetime: Double?
        if let previous, !repeatsExpiry, case .fromServer = policy {
            // The stored response's expiry stays in force, counted from this validation. An entry
            // written before its lifetime was kept keeps its old end: it is revalidated again
            // next time, never taken as fresh for good.
            lifetime = previous.lifetime
            freshUntil = previous.lifetime.map { receivedAt.addingTimeInterval($0) } ?? previous.freshUntil
        } else {
            freshUntil = directives.freshUntil(receivedAt: receivedAt, policy: policy)
            lifetime = freshUntil.map { max(0, $0.timeIntervalSince(receivedAt)) }
        }
        self.init(
            freshUntil: freshUntil,
            etag: response.header("etag") ?? previous?.etag,
            lastModified: response.header("last-modified") ?? previous?.lastModified,
            mustRevalidate: repeatsDirectives
                ? directives.mustRevalidate || directives.noCache : previous?.mustRevalidate ?? false,
            staleIfError: repeatsDirectives ? directives.staleIfError : previous?.staleIfError)
        self.lifetime = lifetime
    }
}

/// The directives that have no field of their own in ``FileCacheMetadata`` travel in its
/// `userInfo`, which every file cache stores as it is: no change to the caches' formats, and an
/// entry written before a key existed reads as "not set".
extension FileCacheMetadata {
    /// `userInfo` key of ``HTTPFreshness/mustRevalidate``: `"1"` when set.
    static let mustRevalidateKey = "must-revalidate"
    /// `userInfo` key of ``HTTPFreshness/staleIfError``: the seconds, as decimal text.
    static let staleIfErrorKey = "stale-if-error"
    /// `userInfo` key of ``HTTPFreshness``'s lifetime: the seconds, as decimal text.
    static let lifetimeKey = "fresh-lifetime"

    /// The freshness stored in this metadata.
    public var freshness: HTTPFreshness {
        var freshness = HTTPFreshness(
            freshUntil: freshUntil, etag: etag, lastModified: lastModified,
            mustRevalidate: userInfo[Self.mustRevalidateKey] == "1",
            staleIfError: Self.seconds(userInfo[Self.staleIfErrorKey]))
        freshness.lifetime = Self.seconds(userInfo[Self.lifetimeKey])
        return freshness
    }

    /// A stored count of seconds, or `nil` when it is absent or damaged (a damaged value reads as
    /// unset rather than as a bound).
    private static func seconds(_ text: String?) -> Double? {
        text.flatMap(Double.init).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
    }

    /// This metadata with `freshness` written into it.
    func with(_ freshness: HTTPFreshness) -> FileCacheMetadata {
        var metadata = self
        metadata.freshUntil = freshness.freshUntil
        metadata.etag = freshness.etag
        metadata.lastModified = freshness.lastModified
        metadata.userInfo[Self.mustRevalidateKey] = freshness.mustRevalidate ? "1" : nil
        metadata.userInfo[Self.staleIfErrorKey] = freshness.staleIfError.map { String($0) }
        metadata.userInfo[Self.lifetimeKey] = freshness.lifetime.map { String($0) }
        return metadata
    }
}

/// A decoded object as the memory cache holds it: the object and how long it is fresh.
///
/// A class, immutable: a memory hit passes its entry from the cache through the manager to the
/// handler of its key, and each copy of a struct holding an existential went through the
/// runtime's value witnesses (a fifth of a hit's instructions, `manage-hit`); a reference is
/// retained instead. Its identity also tells the manager that the memory cache's entry is the
/// very value a handler holds (`LoadCore._idleIfTheMemoryCacheHoldsItsObject`).
public final class CachedObject: Sendable {
    /// The shared, decoded object.
    public let object: any Sendable
    /// Its freshness, when it came from an HTTP response with caching information.
    public let freshness: HTTPFreshness?
    /// Its memory cost, as its decoder reported it.
    public let cost: Int

    /// Creates a memory-cache value.
    ///
    /// - Parameters:
    ///   - object: The shared, decoded object.
    ///   - freshness: Its freshness, or `nil` when it came with no caching information.
    ///   - cost: Its memory cost in bytes.
    public init(object: any Sendable, freshness: HTTPFreshness?, cost: Int) {
        self.object = object
        self.freshness = freshness
        self.cost = cost
    }

    /// Whether it can be delivered without revalidation under `policy`.
    func isFresh(policy: FreshnessPolicy) -> Bool {
        guard let freshness, freshness.freshUntil != nil else { return true }
        return !freshness.isStale(policy: policy)
    }
}

// MARK: - What a response's caching headers say

/// What a response's caching headers say: `Cache-Control` (`max-age`, `no-store`, `no-cache`,
/// `must-revalidate`, `immutable`, `stale-if-error`), `Expires`, `Date` and `Age`.
///
/// On Linux, Foundation's `URLCache` stores nothing, so the manager reads these itself. The
/// manager is a private cache (RFC 9111, section 3): the directives meant for shared caches only,
/// `s-maxage` and `proxy-revalidate`, do not apply to it and are ignored.
public struct HTTPCacheDirectives: Sendable, Hashable {
    /// `no-store`: the response must not be written to the file cache.
    public var noStore = false
    /// `no-cache`: a stored response must be revalidated before every use, so it is never shown
    /// stale, not even after a failed revalidation. The qualified form (`no-cache="Set-Cookie"`)
    /// is read the same way: RFC 9111 allows that, and it errs on the side of the server.
    public var noCache = false
    /// `must-revalidate`: a stale response must never be used without revalidation (so no
    /// stale-while-revalidate and no stale-if-error).
    public var mustRevalidate = false
    /// `immutable`: the response never changes while fresh; never revalidated.
    public var immutable = false
    /// `max-age` in seconds.
    public var maxAge: Double?
    /// `stale-if-error` in seconds (RFC 5861): how long after it expires the response may still be
    /// shown when revalidating it fails with a network error or a 500, 502, 503 or 504.
    public var staleIfError: Double?
    /// The `Expires` date.
    public var expires: Date?
    /// The `Date` header.
    public var date: Date?
    /// The `Age` header in seconds.
    public var age: Double = 0

    /// Reads the directives from response headers; what is absent or unreadable keeps its default.
    ///
    /// - Parameter headers: Response headers with lowercased names, as ``DataLoadResponse/headers``
    ///   has them.
    public init(headers: [String: String]) {
        if let cacheControl = headers["cache-control"] {
            for (name, argument) in Self.directives(in: cacheControl) {
                switch name {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "must-revalidate": mustRevalidate = true
                case "immutable": immutable = true
                case "max-age": maxAge = argument.flatMap(Self.seconds) ?? maxAge
                case "stale-if-error": staleIfError = argument.flatMap(Self.seconds) ?? staleIfError
                default: break
                }
            }
        }
        expires = headers["expires"].flatMap(Self.parseHTTPDate)
        date = headers["date"].flatMap(Self.parseHTTPDate)
        age = headers["age"].flatMap(Double.init) ?? 0
    }

    /// The directives of a `Cache-Control` value: lowercased names, each with its argument
    /// (unquoted), or `nil` when it has none. A comma inside a quoted argument
    /// (`no-cache="Set-Cookie, Vary"`) does not start a directive.
    static func directives(in value: String) -> [(name: String, argument: String?)] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        for character in value {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts.compactMap { part in
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = pieces.first?.lowercased(), !name.isEmpty else { return nil }
            let argument = pieces.count == 2 ? pieces[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
            return (name, argument)
        }
    }

    /// A delta-seconds argument (negative values count as 0), or `nil` when it is not a number.
    private static func seconds(_ argument: String) -> Double? {
        guard let seconds = Double(argument), seconds.isFinite else { return nil }
        return max(0, seconds)
    }

    /// Until when a response is fresh.
    ///
    /// - Parameters:
    ///   - receivedAt: When the response arrived.
    ///   - policy: The request's ``FreshnessPolicy``: the server's headers, a fixed age, or never
    ///     revalidate.
    /// - Returns: The end of freshness (`receivedAt` itself for `no-cache`), or `nil` when the
    ///   response has no expiry of its own (fresh until the cache evicts it).
    public func freshUntil(receivedAt: Date, policy: FreshnessPolicy) -> Date? {
        switch policy {
        case .neverRevalidate:
            return nil
        case .fixed(let seconds):
            return receivedAt.addingTimeInterval(seconds)
        case .fromServer(let defaultMaxAge):
            if immutable { return nil }
            if noCache { return receivedAt }
            if let maxAge { return receivedAt.addingTimeInterval(max(0, maxAge - age)) }
            if let expires {
                let serverNow = date ?? receivedAt
                return receivedAt.addingTimeInterval(expires.timeIntervalSince(serverNow))
            }
            return defaultMaxAge.map { receivedAt.addingTimeInterval($0) }
        }
    }

    /// Parses an HTTP date (IMF-fixdate, RFC 850 or asctime).
    ///
    /// - Parameter text: A header value such as `Sun, 06 Nov 1994 08:49:37 GMT`.
    /// - Returns: The date, or `nil` when the text is in none of the three formats.
    public static func parseHTTPDate(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }

    /// Formats a date as an IMF-fixdate, the form HTTP headers use.
    ///
    /// - Parameter date: The date.
    /// - Returns: Text such as `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func formatHTTPDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

/// How the manager decides whether a cached response is fresh.
public enum FreshnessPolicy: Sendable, Hashable {
    /// Honour the server's `Cache-Control` and `Expires`; with neither, use `defaultMaxAge`
    /// seconds (`nil`: fresh until the cache evicts it). The default, with `defaultMaxAge: nil`.
    case fromServer(defaultMaxAge: Double?)
    /// Ignore the server: fresh for this many seconds after each download ("always cache for N days").
    case fixed(seconds: Double)
    /// Never revalidate: a cached object is used until evicted.
    case neverRevalidate
}
