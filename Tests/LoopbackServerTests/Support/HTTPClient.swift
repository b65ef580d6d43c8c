import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URLSession with no cache, as the tests want it: every request reaches the server and
/// every status (including 304 and 206) is passed through as sent.
struct HTTPClient: Sendable {
    /// What a request produced: the response, or the URLError it failed with.
    enum Outcome: Sendable {
        case response(status: Int, body: Data, response: HTTPURLResponse)
        case failure(URLError)

        /// The status code, or nil when the request failed.
        var status: Int? {
            if case .response(let status, _, _) = self { return status }
            return nil
        }

        /// The body, or nil when the request failed.
        var body: Data? {
            if case .response(_, let body, _) = self { return body }
            return nil
        }

        /// The error code, or nil when a response arrived.
        var errorCode: URLError.Code? {
            if case .failure(let error) = self { return error.code }
            return nil
        }

        /// A response header field, or nil.
        func header(_ name: String) -> String? {
            if case .response(_, _, let response) = self { return response.value(forHTTPHeaderField: name) }
            return nil
        }
    }

    let session: URLSession
    let timeout: Double
    /// Where requests are handed to the session (see `fetch`).
    private let starter = DispatchQueue(label: "HTTPClient.starter")

    /// `timeout` is the idle timeout for every request. It is set on the configuration because
    /// on Linux a request's own `timeoutInterval` does not shorten the configuration's
    /// `timeoutIntervalForRequest` (default 60 s).
    init(timeout: Double = 30, maximumConnectionsPerHost: Int = 6) {
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        session = URLSession(configuration: configuration)
    }

    /// Sends one request and waits for its outcome.
    ///
    /// The task is created and resumed on a queue of the client's own, not on the caller's
    /// thread: FoundationNetworking's `dataTask(with:)` and `resume()` wait for its one work
    /// queue, which every transfer of the process shares. Called from a test's task (as
    /// `URLSession.data(for:)` does), they held both threads of Swift's cooperative pool on a
    /// loaded 2-core machine while that queue was busy, and the tests waiting on the pool stood
    /// still (a thread dump of the contended test runs).
    func fetch(
        _ url: URL, method: String = "GET", headers: [String: String] = [:]
    ) async -> Outcome {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return await withCheckedContinuation { continuation in
            starter.async { [session, request] in
                let task = session.dataTask(with: request) { body, response, error in
                    continuation.resume(returning: Self.outcome(body: body, response: response, error: error))
                }
                task.resume()
            }
        }
    }

    private static func outcome(body: Data?, response: URLResponse?, error: (any Error)?) -> Outcome {
        if let error {
            return .failure(error as? URLError ?? URLError(.unknown))
        }
        guard let http = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
        return .response(status: http.statusCode, body: body ?? Data(), response: http)
    }

    /// Cancels outstanding tasks and releases the session.
    func close() {
        session.invalidateAndCancel()
    }
}
