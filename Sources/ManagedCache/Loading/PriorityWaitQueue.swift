/// Loads waiting for something to admit them (a connection to their host, a token of the rate
/// limit), let go highest priority first and first come first served within one priority. Each
/// priority is read when a waiter is chosen, so a load raised while it waits goes ahead (and one
/// nobody waits for any more, lowered to `.veryLow`, goes last).
///
/// The queue lives in its owner's locked state; `wait(identifier:priority:enqueue:withdraw:forget:)`
/// suspends a task in it and handles a cancellation that comes before, while or after it waits.
struct PriorityWaitQueue {
    /// A suspended load.
    struct Waiter {
        let identifier: UInt64
        let continuation: CheckedContinuation<Void, any Error>
        /// The load's priority now (it may change while it waits).
        let priority: @Sendable () -> LoadPriority
    }

    /// What the owner decided for a waiter it was handed.
    enum Enqueued {
        /// The load was cancelled before it could be queued: it throws `CancellationError`.
        case cancelled
        /// There was room after all: the load goes on at once.
        case admitted
        /// In the queue, until the owner resumes it or it is cancelled.
        case queued
    }

    private var waiters: [Waiter] = []

    var isEmpty: Bool { waiters.isEmpty }
    var count: Int { waiters.count }

    mutating func append(_ waiter: Waiter) {
        waiters.append(waiter)
    }

    /// Takes the waiter `identifier` out (it was cancelled); `nil` when it is not queued.
    mutating func remove(_ identifier: UInt64) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.identifier == identifier }) else { return nil }
        return waiters.remove(at: index)
    }

    /// Takes out the waiter of the highest priority, the first to come among equals. Each
    /// priority is read once, under the owner's lock; a priority cell's own lock is never held
    /// while it calls out, so the nesting cannot deadlock.
    mutating func removeHighestPriority() -> Waiter? {
        let priorities = waiters.map { $0.priority() }
        guard let highest = priorities.max(), let chosen = priorities.firstIndex(of: highest) else { return nil }
        return waiters.remove(at: chosen)
    }

    /// Suspends the calling task until its owner resumes it, or throws `CancellationError` when
    /// the task is cancelled first. Each closure takes the owner's lock itself:
    /// - `enqueue` queues the waiter, or says it was cancelled already or may go at once;
    /// - `withdraw` (on cancellation) removes the waiter and returns it, or, when it is not
    ///   queued yet (the cancellation handler ran first), remembers `identifier` as cancelled
    ///   for `enqueue` and returns `nil`;
    /// - `forget` (once resumed) drops such a mark left by a cancellation that came too late.
    static func wait(
        identifier: UInt64, priority: @escaping @Sendable () -> LoadPriority,
        enqueue: (Waiter) -> Enqueued, withdraw: @Sendable (UInt64) -> Waiter?, forget: (UInt64) -> Void
    ) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                switch enqueue(Waiter(identifier: identifier, continuation: continuation, priority: priority)) {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .admitted: continuation.resume()
                case .queued: break
                }
            }
        } onCancel: {
            withdraw(identifier)?.continuation.resume(throwing: CancellationError())
        }
        forget(identifier)
    }
}
