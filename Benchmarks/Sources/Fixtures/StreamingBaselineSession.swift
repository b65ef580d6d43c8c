import Foundation
import ManagedCacheLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The least a streaming client of `URLSession` does: a data task per URL whose bytes arrive in
/// the session delegate's `didReceive data` callbacks, gathered per task and handed back when the
/// task completes. No limits, progress, timeouts or retries: the floor under any loader that has
/// to see the bytes as they come (to stop an oversized body, report progress, decode previews or
/// spool to a file), measured beside `data(from:)`, which `URLSession` completes internally.
final class StreamingBaselineSession: NSObject, URLSessionDataDelegate, Sendable {
    private struct Transfer {
        var received = Data()
        let continuation: CheckedContinuation<Int, any Error>
    }

    private let transfers = Lock<[Int: Transfer]>([:])
    /// Set once by `make`, before any task starts.
    private let sessionBox = Lock<URLSession?>(nil)

    /// A new client over a session configured as `BaselineSession.make` configures one; call
    /// `invalidate()` when done (the session retains its delegate until then).
    static func make(maximumConnectionsPerHost: Int = 6) -> StreamingBaselineSession {
        let client = StreamingBaselineSession()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: client, delegateQueue: nil)
        client.sessionBox.withLock { $0 = session }
        return client
    }

    /// Ends the session once its tasks have finished.
    func invalidate() {
        sessionBox.withLock { $0 }?.finishTasksAndInvalidate()
    }

    /// The number of bytes of `url`'s body, gathered chunk by chunk.
    func byteCount(of url: URL) async throws -> Int {
        guard let session = sessionBox.withLock({ $0 }) else { throw URLError(.cancelled) }
        return try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: url)
            transfers.withLock { $0[task.taskIdentifier] = Transfer(continuation: continuation) }
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfers.withLock { $0[dataTask.taskIdentifier]?.received.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error {
            transfer.continuation.resume(throwing: error)
        } else if (task.response as? HTTPURLResponse)?.statusCode != 200 {
            transfer.continuation.resume(throwing: URLError(.badServerResponse))
        } else {
            transfer.continuation.resume(returning: transfer.received.count)
        }
    }
}
