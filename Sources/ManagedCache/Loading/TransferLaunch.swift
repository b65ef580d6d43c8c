#if !canImport(Darwin)
import ManagedCacheLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where one load's `URLSessionTask` is, on Linux, between the load's cancellation handler and
/// the block on the loader's serial queue that creates, registers and resumes it.
///
///     pending ──launched──▶ launched(task, transfer) ──cancel──▶ cancelled (the handler cancels the task)
///        └──────────cancel──────────▶ cancelled ──launched──▶ (the block cancels the task itself,
///                                                              or creates none if it had not begun)
///
/// Why: the task is created on that queue (see `URLSessionDataLoader.transfer`), so a
/// cancellation may come before it exists. Whichever of the two comes second cancels it:
/// exactly one of them does, and never before the transfer is registered.
final class TransferLaunch: Sendable {
    private enum Phase {
        case pending
        case launched(URLSessionTask, SessionTransfer)
        case cancelled
    }

    private let phase = Lock(Phase.pending)

    /// Whether the load was cancelled before its task was launched.
    var isCancelled: Bool {
        phase.withLock { phase in
            if case .cancelled = phase { return true }
            return false
        }
    }

    /// Records the registered task; returns `false` if the load was cancelled first (the caller
    /// then cancels the task, which the cancellation handler could not).
    func launched(_ task: URLSessionTask, _ transfer: SessionTransfer) -> Bool {
        phase.withLock { phase in
            guard case .pending = phase else { return false }
            phase = .launched(task, transfer)
            return true
        }
    }

    /// The load was cancelled: returns its task and transfer to cancel when they exist already,
    /// else `nil` (the launching block will see the cancellation). Later calls return `nil`.
    func cancel() -> (URLSessionTask, SessionTransfer)? {
        phase.withLock { phase in
            defer { phase = .cancelled }
            guard case .launched(let task, let transfer) = phase else { return nil }
            return (task, transfer)
        }
    }
}
#endif
