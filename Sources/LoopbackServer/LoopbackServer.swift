import Foundation

// LoopbackServer: a small HTTP/1.1 server on 127.0.0.1 that misbehaves on request, for the
// library's tests, examples and benchmarks to point URLSession at.
//
// API
//   LoopbackServer(configuration: .init(latency:bytesPerSecond:keepAlive:)) throws  // listening at once
//   port, baseURL, url("/a/b.png?q=1"), stop()                       // stop(): also on deinit, idempotent
//   setRoute(path, response), setHandler(path) { request in response }, setFallback { request in response? },
//   removeAllRoutes()                            // exact path; a route registered with "?query" wins for it
//   setLatency(seconds), setBandwidth(bytesPerSecond:)                // shaping, changeable at run time
//   requestCount(for:), recordedRequests(for:), totalRequestCount, bodyBytesSent, headBytesSent,
//   openConnectionCount, peakOpenConnectionCount, acceptedConnectionCount, runningThreadCount,
//   resetStatistics()
//   LoopbackServer.measureCeiling(requests:concurrency:bodySize:) throws -> Double  // requests/s, raw sockets
//
//   LoopbackRequest: method, path, query, headers, receivedAt (when the head was read), target,
//     header(name) (case-insensitive)
//   LoopbackResponse: status, headers, body, contentType, behavior, etag, lastModified,
//     cacheControl, expires, supportsRanges; .ok(data, contentType:), .status(code, body:),
//     .redirect(to:status:), .behaving(behavior), .caching(etag:lastModified:cacheControl:expires:)
//   LoopbackResponse.Behavior: .normal, .delayed(seconds:), .stall(afterBodyBytes:),
//     .truncate(afterBodyBytes:sendContentLength:), .reset(afterBodyBytes:), .drip(chunkSize:interval:),
//     .gated(BodyGate(breaks:))  // pieces sent as the test calls gate.release()
//
// Example
//   let server = try LoopbackServer()
//   server.setRoute("/a.png", .ok(png, contentType: "image/png"))
//   server.setRoute("/slow", .ok(data).behaving(.stall(afterBodyBytes: 100)))
//   server.setRoute("/v", .ok(data).caching(etag: "\"v1\"", cacheControl: "max-age=60"))
//   server.setFallback { request in request.path.hasPrefix("/gen/") ? .ok(blob(for: request.path)) : nil }
//   ... URLSession.shared.data(from: server.url("/a.png")) ...
//   #expect(server.requestCount(for: "/v") == 2)
//   #expect(server.recordedRequests(for: "/v").last?.header("If-None-Match") == "\"v1\"")
//
// HTTP: GET and HEAD (other methods are answered like GET; request bodies with Content-Length
// are read and discarded), keep-alive unless `Connection: close`. A 200 becomes 304 for a
// matching If-None-Match / If-Modified-Since and 206/416 for Range (honouring If-Range).
// Design: one thread per connection with blocking I/O (URLSession opens at most 6 per host),
// TCP_NODELAY; `stop()` wakes every wait through a self-pipe, shuts down every socket and
// waits (bounded) for the threads to return.

/// A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) for testing an HTTP client against
/// responses that are slow, broken or conditional on purpose.
///
/// It starts listening in `init` and stops in ``stop()`` or `deinit`. Every method is safe to
/// call from any thread while requests are being served.
public final class LoopbackServer: Sendable {
    /// The port the server listens on (127.0.0.1 only).
    public let port: Int

    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL

    private let core: ServerCore

    /// Starts a server listening on 127.0.0.1 at a port the system picks.
    public init(configuration: Configuration = .init()) throws {
        core = try ServerCore(configuration: configuration)
        port = core.port
        baseURL = URL(string: "http://127.0.0.1:\(core.port)")!
    }

    deinit {
        core.stop()
    }

    /// The URL of `path` on this server; `path` starts with `/` and may include a query.
    /// Characters a URL cannot hold (spaces, say) are percent-encoded.
    public func url(_ path: String) -> URL {
        let target = path.hasPrefix("/") ? path : "/" + path
        if let url = URL(string: baseURL.absoluteString + target) { return url }
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? "/"
        return URL(string: baseURL.absoluteString + encoded) ?? baseURL
    }

    /// Closes the listener and every open connection (stalled ones too), then waits up to a few
    /// seconds for the server's threads to return (called from a handler, it does not wait).
    /// Idempotent; `deinit` calls it. The port is free afterwards: another server, in this
    /// process or another, may take it; a test of a server that went away uses
    /// ``refuseConnections()``.
    public func stop() {
        core.stop()
    }

    /// Stops the server as ``stop()`` does but keeps its port until the server is released:
    /// connections to ``url(_:)`` are refused, and no other server can take the port and answer
    /// in its place (which a concurrently running test's server did, after `stop()`, on a busy
    /// machine).
    ///
    /// - Throws: ``LoopbackServerError/system(call:errno:)`` when the port cannot be held (the
    ///   server is stopped anyway).
    public func refuseConnections() throws(LoopbackServerError) {
        defer { core.stop() }
        try core.refuseConnections()
    }

    // MARK: Routes

    /// Answers requests for exactly `path` with `response`. A `path` with `?query` matches only
    /// requests with exactly that query, and takes precedence over the bare path.
    public func setRoute(_ path: String, _ response: LoopbackResponse) {
        core.routes.setRoute(path, response)
    }

    /// Answers requests for exactly `path` by calling `handler` for each (on the connection's
    /// thread; it may be called concurrently). A handler that captures this server strongly
    /// keeps it alive until ``stop()`` or ``removeAllRoutes()``; capture it weakly if you rely
    /// on `deinit` to stop it.
    public func setHandler(_ path: String, _ handler: @escaping @Sendable (LoopbackRequest) -> LoopbackResponse) {
        core.routes.setHandler(path, handler)
    }

    /// Answers requests that no route matches; returning `nil` gives a `404`. Called like a
    /// handler of ``setHandler(_:_:)`` (same note on capturing the server).
    public func setFallback(_ handler: @escaping @Sendable (LoopbackRequest) -> LoopbackResponse?) {
        core.routes.setFallback(handler)
    }

    /// Removes every route, handler and the fallback (so everything answers `404`).
    public func removeAllRoutes() {
        core.routes.removeAll()
    }

    // MARK: Shaping

    /// Sets the seconds to wait before each response (0 for none).
    public func setLatency(_ seconds: Double) {
        core.shaping.latency = max(0, seconds)
    }

    /// Sets the body bytes per second per connection (`nil` for unlimited).
    public func setBandwidth(bytesPerSecond: Int?) {
        core.shaping.bytesPerSecond = bytesPerSecond.map { max(1, $0) }
    }

    // MARK: Statistics

    /// How many requests were received for `path` (without query: all queries count; with
    /// `?query`: only that exact query) since start or ``resetStatistics()``.
    public func requestCount(for path: String) -> Int {
        core.statistics.count(for: path)
    }

    /// All requests received since start or ``resetStatistics()``.
    public var totalRequestCount: Int {
        core.statistics.totalCount
    }

    /// The last (at most 1,000) requests received for `path`, oldest first; with `?query`,
    /// only those with exactly that query.
    public func recordedRequests(for path: String) -> [LoopbackRequest] {
        core.statistics.recordedRequests(for: path)
    }

    /// Body bytes written to clients since start or ``resetStatistics()`` (heads not included).
    public var bodyBytesSent: Int {
        core.statistics.bodyBytesSent
    }

    /// Total response-head bytes written (status lines and headers): with `bodyBytesSent`, every
    /// byte of every response.
    public var headBytesSent: Int {
        core.statistics.headBytesSent
    }

    /// Connections currently open.
    public var openConnectionCount: Int {
        core.registry.openCount
    }

    /// Connections accepted since start or ``resetStatistics()``: with keep-alive, far fewer
    /// than requests.
    public var acceptedConnectionCount: Int {
        core.statistics.acceptedConnections
    }

    /// The most connections that were open at once since start or ``resetStatistics()``, as the
    /// server saw them: a connection counts until the server has noticed its close, so a client
    /// that closes one connection and opens another at once may briefly count for both.
    public var peakOpenConnectionCount: Int {
        core.registry.peakOpenCount
    }

    /// Threads the server is running: the accept thread plus one per open connection; 0 once
    /// ``stop()`` has returned.
    public var runningThreadCount: Int {
        core.registry.threadCount
    }

    /// What a test keeps to check that the server, once stopped or released, left nothing behind.
    public var trace: LoopbackServerTrace {
        LoopbackServerTrace(registry: core.registry, descriptors: core.ownDescriptors)
    }

    /// Sets every count and record to zero; the peak restarts from the connections open now
    /// (which stay open).
    public func resetStatistics() {
        core.statistics.reset()
        core.registry.resetPeak()
    }
}

/// What outlives a ``LoopbackServer`` for a leak check: its threads, counted until each ends, and
/// the descriptors it opened at start. Exact whatever other servers of the process do meanwhile,
/// where counting the process's threads or descriptors is not.
public struct LoopbackServerTrace: Sendable {
    fileprivate let registry: ConnectionRegistry
    /// The server's listener and wake pipe, as numbered while it ran (once closed, the system may
    /// give these numbers to other files: compare what they refer to, not the numbers).
    public let descriptors: [Int32]

    fileprivate init(registry: ConnectionRegistry, descriptors: [Int32]) {
        self.registry = registry
        self.descriptors = descriptors
    }

    /// The server's threads that have not ended (the accept thread and one per connection).
    public var runningThreadCount: Int { registry.threadCount }
}
