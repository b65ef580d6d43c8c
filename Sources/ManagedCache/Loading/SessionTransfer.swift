import Foundation
import ManagedCacheLocking

/// One `URLSessionTask` as `URLSessionDataLoader` and its session delegate share it: the receiver
/// the body goes to, the response and any error the receiver threw, and the continuation the
/// loader waits on.
///
/// It is registered with the delegate *before* anything can cancel the task, and the task's end
/// may come before or after the loader starts waiting for it:
///
///     registered ──wait──▶ waiting ──complete──▶ finished   (resumed by the delegate)
///         │                                         ▲
///         └──complete──▶ completedEarly ──wait──────┘       (resumed at once by `wait`)
///
/// Why: a Swift task that is already cancelled runs `withTaskCancellationHandler`'s `onCancel`
/// before its body, so the `URLSessionTask` is cancelled before the loader reaches the point where
/// it waits. FoundationNetworking then reports `didCompleteWithError` at once, and `resume()` on a
/// cancelling task does nothing. When the transfer was only registered together with the
/// continuation, that completion found nothing to resume and was dropped: the loader waited
/// forever, holding its receiver, the receiver's file-cache writer and its open descriptor in
/// `loading/` (issue 19). A fetch is cancelled before its transfer starts whenever a load is
/// cancelled right after it began, most often a resumed download, which first reads its kept
/// bytes back.
final class SessionTransfer: Sendable {
    typealias Continuation = CheckedContinuation<DataLoadResponse, any Error>

    private enum Phase {
        case registered
        case waiting(Continuation)
        case completedEarly(Result<DataLoadResponse, any Error>)
        case finished
    }

    private struct State {
        var phase = Phase.registered
        var response: DataLoadResponse?
        var receiverError: (any Error)?
    }

    /// Where the response and the body go.
    let receiver: any DataLoadReceiver
    private let state = Lock(State())

    init(receiver: any DataLoadReceiver) {
        self.receiver = receiver
        LoadAccounting.transfers.add(1, ordering: .relaxed)
    }

    deinit {
        LoadAccounting.transfers.subtract(1, ordering: .relaxed)
    }

    /// The loader waits for the end of the transfer; resumes `continuation` at once if it has ended.
    func wait(_ continuation: Continuation) {
        let ended = state.withLock { state -> Result<DataLoadResponse, any Error>? in
            switch state.phase {
            case .registered:
                state.phase = .waiting(continuation)
                return nil
            case .completedEarly(let result):
                state.phase = .finished
                return result
            case .waiting, .finished:
                preconditionFailure("SessionTransfer.wait called twice")
            }
        }
        if let ended { continuation.resume(with: ended) }
    }

    /// Records the response head (before the receiver sees it).
    func noteResponse(_ response: DataLoadResponse) {
        state.withLock { $0.response = response }
    }

    /// Records the error the receiver threw; the transfer ends with it.
    func noteReceiverError(_ error: any Error) {
        state.withLock { $0.receiverError = error }
    }

    /// Whether the receiver has thrown (no more body goes to it).
    var receiverFailed: Bool { state.withLock { $0.receiverError != nil } }

    /// The session reports the task's end (`sessionError` is the session's own error, if any).
    /// Resumes the waiting loader, or keeps the outcome for `wait`. Later calls do nothing.
    func complete(sessionError: (any Error)?) {
        let waiting = state.withLock { state -> (Continuation, Result<DataLoadResponse, any Error>)? in
            let result: Result<DataLoadResponse, any Error>
            if let receiverError = state.receiverError {
                result = .failure(receiverError)
            } else if let sessionError {
                result = .failure(ManagedCacheError.from(loaderError: sessionError))
            } else if let response = state.response {
                result = .success(response)
            } else {
                result = .failure(ManagedCacheError.transport(code: -1, description: "no response"))
            }
            switch state.phase {
            case .registered:
                state.phase = .completedEarly(result)
                return nil
            case .waiting(let continuation):
                state.phase = .finished
                return (continuation, result)
            case .completedEarly, .finished:
                return nil
            }
        }
        if let (continuation, result) = waiting { continuation.resume(with: result) }
    }
}
