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

    /// Transfers registered and not yet over (for the reliability tests).
    var transfersInFlight: Int { delegate.transferCount }

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
        // Registered before anything can cancel the task: its end may be reported before this
        // task starts waiting (see `SessionTransfer`).
        let transfer = delegate.register(task: task, receiver: receiver)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.wait(continuation)
                task.resume()  // does nothing once the task is cancelling
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The session's delegate: routes callbacks to the transfer of each task.
///
/// `URLSessionDelegate` must be `Sendable`; the table sits in one lock, and each transfer guards
/// its own state.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Lock<[Int: SessionTransfer]>([:])

    /// Registers the transfer of `task`, which ends (and leaves the table) in `didCompleteWithError`.
    func register(task: URLSessionTask, receiver: any DataLoadReceiver) -> SessionTransfer {
        let transfer = SessionTransfer(receiver: receiver)
        transfers.withLock { $0[task.taskIdentifier] = transfer }
        return transfer
    }

    /// Transfers registered and not yet over.
    var transferCount: Int { transfers.withLock { $0.count } }

    private func transfer(of task: URLSessionTask) -> SessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
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
        guard let transfer = transfer(of: dataTask) else {
            completionHandler(.cancel)
            return
        }
        transfer.noteResponse(loadResponse)
        do {
            try transfer.receiver.didReceive(response: loadResponse)
            completionHandler(.allow)
        } catch {
            transfer.noteReceiverError(error)
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(of: dataTask), !transfer.receiverFailed else { return }
        do {
            try transfer.receiver.didReceive(data)
        } catch {
            transfer.noteReceiverError(error)
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.complete(sessionError: error)
    }
}
