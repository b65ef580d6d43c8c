import Foundation

/// What the server answers for a route, including how it misbehaves while answering.
///
/// The server derives the status actually sent from the request: a `200` becomes `304` for a
/// matching `If-None-Match` / `If-Modified-Since`, `206` for a satisfiable `Range` (when
/// ``supportsRanges``), `416` for an unsatisfiable one. The ``behavior`` then applies to the
/// body bytes actually sent (the range for a `206`, nothing for `HEAD` or `304`).
public struct LoopbackResponse: Sendable {
    /// How the server delivers (or fails to deliver) the response.
    public enum Behavior: Sendable, Equatable {
        /// Sends the response at once (subject to the server's latency and bandwidth settings).
        case normal
        /// Waits `seconds` before sending anything.
        case delayed(seconds: Double)
        /// Sends the head and the first `afterBodyBytes` body bytes, then nothing more; the
        /// socket stays open until the client closes it or the server stops.
        case stall(afterBodyBytes: Int)
        /// Sends the first `afterBodyBytes` body bytes, then closes cleanly (FIN). With
        /// `sendContentLength` the head announces the full length (the client sees a short body);
        /// without it the head has no length and says `Connection: close` (the client sees a
        /// complete, shorter body).
        case truncate(afterBodyBytes: Int, sendContentLength: Bool)
        /// Sends the first `afterBodyBytes` body bytes, then aborts the connection with an RST.
        case reset(afterBodyBytes: Int)
        /// Sends the body `chunkSize` bytes at a time, waiting `interval` seconds between chunks.
        case drip(chunkSize: Int, interval: Double)
        /// Sends the body in the pieces `gate` cuts it into, each after the first only once the
        /// test releases it (see `BodyGate`).
        case gated(BodyGate)
    }

    /// The status code for a plain request (see the type's notes for conditional and range requests).
    public var status: Int
    /// Extra header fields, sent in order after the ones the server writes itself
    /// (`Content-Length`, `Content-Type`, the caching fields below, `Accept-Ranges`, `Content-Range`).
    public var headers: [(name: String, value: String)]
    /// The full body.
    public var body: Data
    /// `Content-Type`, when not `nil`.
    public var contentType: String?
    /// How the response is delivered.
    public var behavior: Behavior
    /// `ETag`, when not `nil` (include the quotes: `"\"v1\""` or `"W/\"v1\""`). Used for
    /// `If-None-Match` and `If-Range`.
    public var etag: String?
    /// `Last-Modified`, when not `nil` (an HTTP date). Used for `If-Modified-Since` (exact match)
    /// and `If-Range`.
    public var lastModified: String?
    /// `Cache-Control`, when not `nil`.
    public var cacheControl: String?
    /// `Expires`, when not `nil`.
    public var expires: String?
    /// Whether a `200` honours `Range: bytes=N-`, `bytes=N-M` and `bytes=-N` (with `If-Range`)
    /// and advertises `Accept-Ranges: bytes`. When false, `Range` is ignored and the full body
    /// is sent with `200`.
    public var supportsRanges: Bool

    /// Creates a response; the static helpers cover the common cases.
    public init(
        status: Int,
        headers: [(name: String, value: String)] = [],
        body: Data = Data(),
        contentType: String? = nil,
        behavior: Behavior = .normal,
        etag: String? = nil,
        lastModified: String? = nil,
        cacheControl: String? = nil,
        expires: String? = nil,
        supportsRanges: Bool = true
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.contentType = contentType
        self.behavior = behavior
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.expires = expires
        self.supportsRanges = supportsRanges
    }

    /// A `200` with `body`.
    public static func ok(_ body: Data, contentType: String = "application/octet-stream") -> Self {
        Self(status: 200, body: body, contentType: contentType)
    }

    /// A response with status `code` and an optional body (e.g. `404`, `500`, `503`).
    public static func status(_ code: Int, body: Data = Data()) -> Self {
        Self(status: code, body: body, contentType: body.isEmpty ? nil : "text/plain; charset=utf-8")
    }

    /// A redirect to `location` (absolute URL or path) with status `302` unless told otherwise.
    public static func redirect(to location: String, status: Int = 302) -> Self {
        Self(status: status, headers: [("Location", location)])
    }

    /// A copy with `behavior` replaced: `.ok(data).behaving(.stall(afterBodyBytes: 10))`.
    public func behaving(_ behavior: Behavior) -> Self {
        var copy = self
        copy.behavior = behavior
        return copy
    }

    /// A copy with the given caching fields set (those passed as `nil` are left as they were).
    public func caching(
        etag: String? = nil, lastModified: String? = nil, cacheControl: String? = nil, expires: String? = nil
    ) -> Self {
        var copy = self
        copy.etag = etag ?? copy.etag
        copy.lastModified = lastModified ?? copy.lastModified
        copy.cacheControl = cacheControl ?? copy.cacheControl
        copy.expires = expires ?? copy.expires
        return copy
    }
}
