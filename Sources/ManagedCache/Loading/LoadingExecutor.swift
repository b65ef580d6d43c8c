/// The executor the manager runs its loads, decodes and file-cache work on: the engine's worker
/// threads (`EngineThreads.workers`) rather than Swift's cooperative pool.
///
/// Why: decoding and file I/O block their thread for a while, and so does app code that waits
/// synchronously. The cooperative pool has one thread per core (two on a small device), so a
/// few blocked threads there would stall every image in the app, and the app's own tasks would
/// stall the loads. The workers are the engine's alone, a fixed number whatever the load (a
/// concurrent dispatch queue, used before, added a thread for every block that blocked).
///
/// Task executors arrived with iOS 18 / macOS 15: below them, `LoadingTask.start` runs the same
/// work as detached tasks on the cooperative pool (what most image pipelines do everywhere).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class LoadingExecutor: TaskExecutor {  // portability-lint: allow declared @available
    /// One executor per process, shared by every manager.
    static let shared = LoadingExecutor()

    private let workers = EngineThreads.workers

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        workers.async { job.runSynchronously(on: executor) }
    }
}

/// Starts the manager's loading work: on `LoadingExecutor` where task executors exist (Linux,
/// iOS 18, macOS 15 and later), else as a detached task.
enum LoadingTask {
    /// Starts `operation` with `priority` (default: none) and returns its task.
    @discardableResult
    static func start<Success: Sendable>(
        priority: TaskPriority? = nil, _ operation: sending @escaping () async -> Success
    ) -> Task<Success, Never> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // portability-lint: allow inside #available
            return Task(executorPreference: LoadingExecutor.shared, priority: priority, operation: operation)
        }
        return Task.detached(priority: priority, operation: operation)
    }

    /// Starts the throwing `operation` with `priority` (default: none) and returns its task.
    @discardableResult
    static func start<Success: Sendable>(
        priority: TaskPriority? = nil, _ operation: sending @escaping () async throws -> Success
    ) -> Task<Success, any Error> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // portability-lint: allow inside #available
            return Task(executorPreference: LoadingExecutor.shared, priority: priority, operation: operation)
        }
        return Task.detached(priority: priority, operation: operation)
    }
}
