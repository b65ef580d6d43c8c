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
    func fetch(
        _ url: URL, method: String = "GET", headers: [String: String] = [:]
    ) async -> Outcome {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        do {
            let (body, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
            return .response(status: http.statusCode, body: body, response: http)
        } catch let error as URLError {
            return .failure(error)
        } catch {
            return .failure(URLError(.unknown))
        }
    }

    /// Cancels outstanding tasks and releases the session.
    func close() {
        session.invalidateAndCancel()
    }
}
