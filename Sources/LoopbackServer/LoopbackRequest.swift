import Foundation

/// One HTTP request as the server received it: what handlers see and what the server records.
public struct LoopbackRequest: Sendable {
    /// The method, as sent (`GET`, `HEAD`, ...).
    public var method: String
    /// The path without the query, as sent (not percent-decoded), e.g. `/a/b.png`.
    public var path: String
    /// The query without the `?` (not percent-decoded), or `""` when there is none.
    public var query: String
    /// The header fields in the order they were sent, names as sent.
    public var headers: [(name: String, value: String)]
    /// When the server had read the request's head: the moment the request reached the server.
    /// Tests compare it with the client's own clock readings (the same process, the same clock).
    /// A `Date` (not `ContinuousClock`, which needs macOS 13 / iOS 16).
    public var receivedAt: Date

    /// Creates a request; the server builds these (`receivedAt` is when it read the head), tests
    /// may build their own for handlers.
    public init(
        method: String, path: String, query: String = "", headers: [(name: String, value: String)] = [],
        receivedAt: Date = Date()
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.receivedAt = receivedAt
    }

    /// The path followed by `?query` when there is a query: the request target as sent.
    public var target: String { query.isEmpty ? path : path + "?" + query }

    /// The value of the header field `name`, compared case-insensitively; repeated fields are
    /// joined with ", " as HTTP allows. `nil` when the request has no such field.
    public func header(_ name: String) -> String? {
        var found: String?
        for field in headers where field.name.caseInsensitiveEquals(name) {
            found = found.map { $0 + ", " + field.value } ?? field.value
        }
        return found
    }
}

extension String {
    /// ASCII case-insensitive equality, cheap enough for header lookups on every request.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { lhs, rhs in
            lhs == rhs || (lhs | 0x20 == rhs | 0x20 && (lhs | 0x20) >= 0x61 && (lhs | 0x20) <= 0x7A)
        }
    }
}
