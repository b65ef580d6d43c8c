import ManagedCacheLocking

/// Where a fetch's task will be: decided under the manager's lock, created after it.
///
/// Why: creating a task enqueues its first job on the loading executor, which may wake or start a
/// dispatch thread. On a busy 2-core machine that can take the CPU from the thread that holds the
/// lock while every `manage` waits for it. So `_createFetch` only records a
/// `FetchStart`, and `ManagerLock` creates the task once the lock is released. A fetch cancelled
/// in between (pushed out of the loading buffer by the next `manage`) never gets a task.
///
///     waiting ──start──▶ running(task) ──cancel──▶ cancelled (task cancelled)
///        └─────────────────cancel────────────────▶ cancelled (start does nothing)
final class FetchTaskSlot: Sendable {
    private enum Phase {
        case waiting
        case running(Task<Void, Never>)
        case cancelled
    }

    private let phase = Lock(Phase.waiting)

    /// Creates the task with `makeTask` unless the fetch was cancelled first. The task is made
    /// under the slot's own lock (taken by nothing but `start` and `cancel`), so a cancellation
    /// that comes meanwhile cancels it.
    func start(_ makeTask: () -> Task<Void, Never>) {
        phase.withLock { phase in
            guard case .waiting = phase else { return }
            phase = .running(makeTask())
        }
    }

    /// Whether the task was created (for the tests).
    var hasTask: Bool {
        phase.withLock { phase in
            if case .running = phase { return true }
            return false
        }
    }

    /// Cancels the task, or makes sure it is never created.
    func cancel() {
        let task = phase.withLock { phase -> Task<Void, Never>? in
            defer { phase = .cancelled }
            guard case .running(let task) = phase else { return nil }
            return task
        }
        // Outside the lock, on this thread: the task's cancellation handlers run here and close the
        // download's file at once (the descriptor bound counts on it). What could block, the
        // `URLSessionTask`'s own cancellation, is handed off by the loader
        // (`SessionDelegate.cancel(_:)` in `URLSessionDataLoader.swift`).
        task?.cancel()
    }
}

/// A fetch task to create once the manager's lock is released (`ManagerLock`).
struct FetchStart: Sendable {
    let slot: FetchTaskSlot
    /// The manager's count of fetch tasks created and not finished.
    let running: SharedLock<Int>
    let operation: @Sendable () async -> Void

    /// Creates the task on the loading executor, unless the fetch was cancelled already.
    func run() {
        let (running, operation) = (self.running, self.operation)
        slot.start {
            running.withLock { $0 += 1 }
            return LoadingTask.start {
                defer { running.withLock { $0 -= 1 } }
                await operation()
            }
        }
    }
}
