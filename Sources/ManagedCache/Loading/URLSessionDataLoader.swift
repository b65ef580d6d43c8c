import Foundation
import ManagedCacheLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `http` and `https` URLs with `URLSession` (FoundationNetworking on Linux), streaming each
/// body to its receiver as it arrives.
///
/// It uses an ephemeral session: `URLCache` stores nothing on Linux anyway, and the manager does
/// its own caching. Redirects are followed (at most 20, then the load fails). Cancelling the Swift
/// task running `load` cancels the `URLSessionTask` at once.
public final class URLSessionDataLoader: DataLoading {
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a loader with its own session; `maximumConnectionsPerHost` defaults to 6, as
    /// `URLSession` does. `configure` may change the session configuration further (proxies, TLS).
    public init(maximumConnectionsPerHost: Int = 6, configure: ((URLSessionConfiguration) -> Void)? = nil) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configure?(configuration)
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func canLoad(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return (scheme == "http" || scheme == "https") && url.host?.isEmpty == false
    }

    public func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // The manager runs its own idle-timeout watchdog (Linux rounds URLSession timeouts down to
        // whole seconds); this is only a backstop a little beyond it.
        urlRequest.timeoutInterval = max(1, request.timeout.rounded(.up) + 1)
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let task = session.dataTask(with: urlRequest)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task: task, receiver: receiver, continuation: continuation)
                if Task.isCancelled { task.cancel() }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The session's delegate: routes callbacks to the receiver of each task.
///
/// `URLSessionDelegate` must be `Sendable`; all mutable state sits in one `Mutex`.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Transfer {
        let receiver: any DataLoadReceiver
        let continuation: CheckedContinuation<DataLoadResponse, any Error>
        var response: DataLoadResponse?
        var receiverError: (any Error)?
    }

    private let transfers = Lock<[Int: Transfer]>([:])

    func register(
        task: URLSessionTask, receiver: any DataLoadReceiver,
        continuation: CheckedContinuation<DataLoadResponse, any Error>
    ) {
        transfers.withLock {
            $0[task.taskIdentifier] = Transfer(receiver: receiver, continuation: continuation)
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        let expected = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
        let loadResponse = DataLoadResponse(
            statusCode: http?.statusCode, headers: headers, expectedContentLength: expected, url: response.url)
        let receiver = transfers.withLock { transfers -> (any DataLoadReceiver)? in
            transfers[dataTask.taskIdentifier]?.response = loadResponse
            return transfers[dataTask.taskIdentifier]?.receiver
        }
        do {
            try receiver?.didReceive(response: loadResponse)
            completionHandler(.allow)
        } catch {
            transfers.withLock { $0[dataTask.taskIdentifier]?.receiverError = error }
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let receiver = transfers.withLock { transfers -> (any DataLoadReceiver)? in
            guard let transfer = transfers[dataTask.taskIdentifier], transfer.receiverError == nil else { return nil }
            return transfer.receiver
        }
        guard let receiver else { return }
        do {
            try receiver.didReceive(data)
        } catch {
            transfers.withLock { $0[dataTask.taskIdentifier]?.receiverError = error }
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let receiverError = transfer.receiverError {
            transfer.continuation.resume(throwing: receiverError)
        } else if let error {
            transfer.continuation.resume(throwing: ManagedCacheError.from(loaderError: error))
        } else if let response = transfer.response {
            transfer.continuation.resume(returning: response)
        } else {
            transfer.continuation.resume(throwing: ManagedCacheError.transport(code: -1, description: "no response"))
        }
    }
}
