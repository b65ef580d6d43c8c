import Foundation

/// Fetches bytes for a URL and streams them to a receiver: the network layer the manager loads
/// through. The package ships `URLSessionDataLoader` (http/https), `FileURLDataLoader` (`file://`)
/// and `DefaultDataLoader`, which routes by scheme and accepts custom loaders for other schemes
/// or for tests.
///
/// A loader streams; the manager enforces the rest the same way for every loader: it rejects
/// non-2xx statuses, stops bodies over the size limit, times out idle loads and counts progress.
/// A loader that holds requests back (a per-host connection limit, a queue) tells the receiver
/// with `requestIsWaitingForConnection()` and `requestDidStart()`, so that the wait does not
/// count towards the idle timeout.
/// When the receiver throws, the loader stops the transfer and rethrows that error. When the Swift
/// task running `load` is cancelled, the loader stops the transfer at once.
public protocol DataLoading: Sendable {
    /// Whether this loader handles a URL, usually by its scheme. The manager refuses a request
    /// no loader handles with ``ManagedCacheError/invalidRequest(reason:)``, without loading.
    ///
    /// - Parameter url: The URL of a request about to load.
    /// - Returns: `true` when ``load(_:receiver:)`` can fetch it.
    func canLoad(_ url: URL) -> Bool

    /// Loads a request, streaming its response head and then its body to a receiver, in order.
    ///
    /// - Parameters:
    ///   - request: What to fetch, with headers, idle timeout and priority.
    ///   - receiver: Told ``DataLoadReceiver/didReceive(response:)`` once, then
    ///     ``DataLoadReceiver/didReceive(_:)`` for each chunk. When it throws, stop the transfer
    ///     and rethrow its error.
    /// - Returns: The response, once the body is complete.
    /// - Throws: The receiver's error; a `URLError` or ``ManagedCacheError`` when the transfer
    ///   fails; `CancellationError` or ``ManagedCacheError/cancelled(_:)`` when the task running
    ///   the load is cancelled (stop the transfer at once then).
    func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse
}

/// What a `DataLoading` implementation is asked to fetch.
public struct DataLoadRequest: Sendable, Hashable {
    /// The URL to fetch.
    public var url: URL
    /// Header fields to send.
    public var headers: [String: String]
    /// The idle timeout the manager enforces; loaders may use it as a backstop.
    public var timeout: Double
    /// The load's priority when it started. The manager may raise or lower it while the load
    /// runs (a user with a higher priority joins); the built-in `URLSessionDataLoader` follows
    /// those changes, a custom loader sees the starting value.
    public var priority: LoadPriority
    /// The live priority of the manager's fetch, for the built-in loader; `nil` for requests made
    /// by hand. Not part of the request's identity.
    var priorityCell: LoadPriorityCell?

    /// Creates a load request.
    ///
    /// - Parameters:
    ///   - url: The URL to fetch.
    ///   - headers: Header fields to send (default none).
    ///   - timeout: The idle timeout in seconds (default 30).
    ///   - priority: How urgent the load is (default `.normal`).
    public init(url: URL, headers: [String: String] = [:], timeout: Double = 30, priority: LoadPriority = .normal) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.priority = priority
    }

    /// The priority now: the live one while the manager's fetch runs, else `priority`.
    var currentPriority: LoadPriority { priorityCell?.value ?? priority }

    /// Whether two requests ask for the same thing: URL, headers, timeout and starting priority.
    ///
    /// - Parameters:
    ///   - lhs: A request.
    ///   - rhs: Another request.
    /// - Returns: `true` when every public field is equal.
    public static func == (lhs: DataLoadRequest, rhs: DataLoadRequest) -> Bool {
        lhs.url == rhs.url && lhs.headers == rhs.headers && lhs.timeout == rhs.timeout && lhs.priority == rhs.priority
    }

    /// Hashes the fields `==` compares.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(headers)
        hasher.combine(timeout)
        hasher.combine(priority)
    }
}

/// What came back: the status (for HTTP), the headers, the announced length and the final URL.
public struct DataLoadResponse: Sendable, Hashable {
    /// The HTTP status code, or `nil` for loaders without one (`file://`).
    public var statusCode: Int?
    /// Response headers, names lowercased.
    public var headers: [String: String]
    /// The `Content-Length` (or file size), when known.
    public var expectedContentLength: Int?
    /// The URL the bytes finally came from, after redirects.
    public var url: URL?

    /// Creates a response description.
    ///
    /// - Parameters:
    ///   - statusCode: The HTTP status code, or `nil` for a loader without one.
    ///   - headers: The response headers, names lowercased. Default none.
    ///   - expectedContentLength: The announced body size, or `nil` when unknown.
    ///   - url: The URL the bytes finally came from, or `nil`.
    public init(statusCode: Int?, headers: [String: String] = [:], expectedContentLength: Int?, url: URL?) {
        self.statusCode = statusCode
        self.headers = headers
        self.expectedContentLength = expectedContentLength
        self.url = url
    }

    /// Looks a response header up.
    ///
    /// - Parameter name: The header's name, in any case.
    /// - Returns: Its value, or `nil` when the response has no such header.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Receives a load's response and body as they arrive. Throwing stops the load with that error.
public protocol DataLoadReceiver: Sendable {
    /// The response head arrived, before any body byte.
    ///
    /// - Parameter response: The status, headers and announced length.
    /// - Throws: Any error, to stop the load: a status the manager rejects, a body announced over
    ///   the size limit.
    func didReceive(response: DataLoadResponse) throws
    /// A piece of the body arrived.
    ///
    /// - Parameter chunk: The next bytes, in order.
    /// - Throws: Any error, to stop the load: the body grew over the size limit, the file cache
    ///   refused the write and the load was cancelled.
    func didReceive(_ chunk: Data) throws
    /// The loader holds the request back until one of the host's connections is free (as
    /// `URLSessionDataLoader` does beyond its per-host limit): the manager's idle timeout does
    /// not count while the request waits. Loaders that never hold requests back need not call it.
    func requestIsWaitingForConnection()
    /// The loader handed the request to the network (after waiting, if it waited): the idle
    /// timeout counts from now.
    func requestDidStart()
}

extension DataLoadReceiver {
    /// Does nothing: a receiver without an idle timeout does not care about waiting.
    public func requestIsWaitingForConnection() {}
    /// Does nothing: a receiver without an idle timeout does not care when the request started.
    public func requestDidStart() {}
}

extension ManagedCacheError {
    /// Maps whatever a loader threw to the manager's error vocabulary.
    static func from(loaderError error: any Error) -> ManagedCacheError {
        if let error = error as? ManagedCacheError { return error }
        if error is CancellationError { return .cancelled(.caller) }
        if let error = error as? URLError {
            switch error.code {
            case .cancelled: return .cancelled(.caller)
            case .timedOut: return .timedOut(seconds: 0)
            case .unsupportedURL, .badURL: return .invalidRequest(reason: error.localizedDescription)
            default: return .transport(code: error.code.rawValue, description: error.localizedDescription)
            }
        }
        let nsError = error as NSError
        return .transport(code: nsError.code, description: nsError.localizedDescription)
    }
}
