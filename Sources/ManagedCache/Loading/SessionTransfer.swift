import Dispatch
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
/// `loading/`, one leaked descriptor per such load. A fetch is cancelled before its transfer starts whenever a load is
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
        /// When the loader cancelled the task (for `diagnosis`).
        var cancelledAt: MonotonicInstant?
    }

    /// When the transfer was registered (for `diagnosis`).
    private let registeredAt = MonotonicInstant.now

    /// Where the response and the body go.
    let receiver: any DataLoadReceiver
    private let state = Lock(State())

    init(receiver: any DataLoadReceiver) {
        self.receiver = receiver
        LoadAccounting.transfers.withLock { $0 += 1 }
        LoadAccounting.transfersMadeCount.withLock { $0 += 1 }
    }

    deinit {
        LoadAccounting.transfers.withLock { $0 -= 1 }
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
        end { state in
            if let receiverError = state.receiverError { return .failure(receiverError) }
            if let sessionError { return .failure(ManagedCacheError.from(loaderError: sessionError)) }
            if let response = state.response { return .success(response) }
            return .failure(ManagedCacheError.transport(code: -1, description: "no response"))
        }
    }

    /// How long a cancelled transfer waits for the session to report its end before it ends by
    /// itself (see `cancelled(grace:graceEnded:)`).
    static let cancellationGrace: Double = 5

    /// The loader cancelled the task. If the session has not reported the task's end `grace`
    /// seconds from now, the transfer ends by itself, cancelled; a report that comes later finds
    /// nothing and does nothing. `graceEnded` is called then with whether the transfer ended by
    /// itself (the loader removes it from its delegate's table); it is not called when the
    /// transfer was released first (the session reported its end and nothing holds it).
    ///
    /// Why: FoundationNetworking promises `didCompleteWithError` for every cancelled task, and it
    /// is what the loader waits for. The reliability suite has found transfers left after their
    /// loads ended on loaded machines; the cause found (a transfer registered late, after its
    /// fetch was cancelled) is fixed in the loader, and no lost report was seen in the session's
    /// code. But were one lost, the load's task, its receiver and its file-cache writer would wait
    /// forever, so a cancelled transfer ends anyway. A cancelled load has nothing left to receive
    /// (its receiver stopped taking bytes and closed its writer at the cancellation), so ending
    /// it here loses nothing.
    func cancelled(
        grace: Double = SessionTransfer.cancellationGrace, graceEnded: @escaping @Sendable (_ endedByGrace: Bool) -> Void
    ) {
        state.withLock { $0.cancelledAt = .now }
        LoadAccounting.transfersCancelledCount.withLock { $0 += 1 }
        // One process-wide timer, not an `asyncAfter` here: this runs on the thread that cancels
        // (often one calling `manage`), and arming a timer of its own woke dispatch's event thread,
        // which took the caller's CPU (see `DeadlineTimer`).
        DeadlineTimer.shared.run(after: grace) { [weak self] in
            guard let self else { return }  // ended and released: the session reported it
            // The loader hears of the end last, once the table has forgotten the transfer: when
            // the load's task ends, nothing of its transfer is left.
            let (endedHere, resume) = self.decideEnd { _ in .failure(ManagedCacheError.cancelled(.caller)) }
            if endedHere { LoadAccounting.unreportedCancellationCount.withLock { $0 += 1 } }
            graceEnded(endedHere)
            resume?()
        }
    }

    /// What a test reports about a transfer that has not ended: its phase, its age, whether it
    /// had a response and when it was cancelled.
    var diagnosis: String {
        state.withLock { state in
            let phase: String
            switch state.phase {
            case .registered: phase = "registered"
            case .waiting: phase = "waiting"
            case .completedEarly: phase = "completed early"
            case .finished: phase = "finished"
            }
            let now = MonotonicInstant.now
            let age = String(format: "%.1f", now.seconds(since: registeredAt))
            let cancelled = state.cancelledAt.map { String(format: "cancelled %.1f s ago", now.seconds(since: $0)) } ?? "not cancelled"
            let response = state.response.map { "response \($0.statusCode.map(String.init) ?? "-")" } ?? "no response"
            let receiver = state.receiverError.map { ", receiver threw \($0)" } ?? ""
            return "\(phase), \(age) s old, \(response), \(cancelled)\(receiver)"
        }
    }

    /// Ends the transfer with the outcome `result` gives (read under the lock) unless it has
    /// ended: resumes the waiting loader, or keeps the outcome for `wait`.
    private func end(_ result: (State) -> Result<DataLoadResponse, any Error>) {
        decideEnd(result).resume?()
    }

    /// `end`'s decision: whether this call ended the transfer, and the resumption of the waiting
    /// loader, if one waits, for the caller to run when it is ready.
    private func decideEnd(
        _ result: (State) -> Result<DataLoadResponse, any Error>
    ) -> (endedHere: Bool, resume: (() -> Void)?) {
        let (endedHere, waiting) = state.withLock { state -> (Bool, (Continuation, Result<DataLoadResponse, any Error>)?) in
            switch state.phase {
            case .registered:
                state.phase = .completedEarly(result(state))
                return (true, nil)
            case .waiting(let continuation):
                let outcome = result(state)
                state.phase = .finished
                return (true, (continuation, outcome))
            case .completedEarly, .finished:
                return (false, nil)
            }
        }
        guard let (continuation, outcome) = waiting else { return (endedHere, nil) }
        return (endedHere, { continuation.resume(with: outcome) })
    }
}
