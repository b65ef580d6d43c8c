import Dispatch

/// The executor the manager runs its loads, decodes and file-cache work on: a concurrent dispatch
/// queue rather than Swift's cooperative pool.
///
/// Why: decoding and file I/O block their thread for a while, and so does app code that waits
/// synchronously. The cooperative pool has one thread per core (two on a small device), so a
/// few blocked threads there would stall every image in the app. Dispatch adds threads when its
/// threads block, so loads keep moving whatever else the process does.
final class LoadingExecutor: TaskExecutor {
    /// One executor per process, shared by every manager.
    static let shared = LoadingExecutor()

    private let queue = DispatchQueue(label: "ManagedCache.loading", qos: .utility, attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
