import Foundation

/// Fetches bytes for a URL and streams them to a receiver: the network layer the manager loads
/// through. The package ships `URLSessionDataLoader` (http/https), `FileURLDataLoader` (`file://`)
/// and `DefaultDataLoader`, which routes by scheme and accepts custom loaders for other schemes
/// or for tests.
///
/// A loader streams; the manager enforces the rest the same way for every loader: it rejects
/// non-2xx statuses, stops bodies over the size limit, times out idle loads and counts progress.
/// When the receiver throws, the loader stops the transfer and rethrows that error. When the Swift
/// task running `load` is cancelled, the loader stops the transfer at once.
public protocol DataLoading: Sendable {
    /// Whether this loader handles `url` (usually by its scheme).
    func canLoad(_ url: URL) -> Bool

    /// Loads `request`, calling `receiver.didReceive(response:)` once and then
    /// `receiver.didReceive(_:)` for each chunk, in order. Returns the response when the body is complete.
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

    /// Creates a load request.
    public init(url: URL, headers: [String: String] = [:], timeout: Double = 30) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
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
    public init(statusCode: Int?, headers: [String: String] = [:], expectedContentLength: Int?, url: URL?) {
        self.statusCode = statusCode
        self.headers = headers
        self.expectedContentLength = expectedContentLength
        self.url = url
    }

    /// The value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Receives a load's response and body as they arrive. Throwing stops the load with that error.
public protocol DataLoadReceiver: Sendable {
    /// The response head arrived (before any body byte).
    func didReceive(response: DataLoadResponse) throws
    /// A piece of the body arrived.
    func didReceive(_ chunk: Data) throws
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
