import Foundation

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
