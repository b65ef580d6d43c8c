import Foundation
import ManagedCacheLocking
import Testing

/// Runs each test of a suite (or one test) on threads of its own instead of Swift concurrency's
/// cooperative pool.
///
/// The pool has one thread per core: two on a 2-core CI machine. A test that blocks (disk I/O in
/// a synchronous test, waiting for a child process) holds one of them for its whole duration, and
/// Swift Testing starts every test at once, so a few blocking suites leave no thread for the tasks
/// the asynchronous tests wait on: their bounded waits then expire with nothing wrong in the code
/// under test. Tests that block mark themselves `.offCooperativePool`; they still run in parallel
/// with the others, and the pool stays free for the work that needs it.
///
/// ```swift
/// @Suite(.offCooperativePool) struct DiskHeavyTests { ... }
/// ```
public struct OffCooperativePool: TestTrait, SuiteTrait, TestScoping {
    /// With a number, the test and its child tasks run on that many threads of their own
    /// (`.ownThreads`); without, each job on a new thread (`.offCooperativePool`).
    var ownThreads: Int?

    /// Applies to every test of a suite marked with it.
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Once per test case: that is where the test's body runs.
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            // No task executors before these: the test runs on the pool as usual.
            try await function()
            return
        }
        // Kept for the whole scope: a task prefers the executor only as long as this call lasts.
        // portability-lint: allow checked just above
        let executor: any TaskExecutor = ownThreads.map { FixedThreadsExecutor(threads: $0) } ?? ThreadPerJobExecutor.shared
        try await withTaskExecutorPreference(executor) {  // portability-lint: allow checked just above
            try await function()
        }
    }
}

extension Trait where Self == OffCooperativePool {
    /// Runs the test (or every test of the suite) off the cooperative pool: for tests that block.
    public static var offCooperativePool: Self { Self() }
}

/// A task executor that runs every job on a new thread. Meant for the few jobs of tests that
/// block (a synchronous test body is one job), not for fine-grained asynchronous work.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class ThreadPerJobExecutor: TaskExecutor {  // portability-lint: allow declared @available
    /// The one instance the trait uses.
    public static let shared = ThreadPerJobExecutor()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

extension Trait where Self == OffCooperativePool {
    /// Runs the test (or every test of the suite), and the child tasks it starts, on two threads
    /// of its own instead of the cooperative pool: for tests that flood the pool with their own
    /// work (hundreds of tasks calling `manage`, the stress suite's workers). On the pool's two
    /// threads of a 2-core machine their queued jobs came before every other test's, and under
    /// ThreadSanitizer a task another test started waited more than a minute to begin. On threads
    /// of their own they compete for the processor like any thread, and the pool stays free; the
    /// test's concurrency is two threads' worth, as on the pool.
    public static var ownThreads: Self { Self(ownThreads: 2) }
}

/// A task executor with a fixed number of threads of its own, taking jobs in the order they
/// come; the threads end when the executor is released and its queue is empty.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class FixedThreadsExecutor: TaskExecutor {  // portability-lint: allow declared @available
    private struct Queue {
        var jobs: [UnownedJob] = []
        var next = 0
        var released = false
    }

    private let queue = WaitableLock(Queue())

    /// Starts `threads` threads, which wait for jobs. Keep the executor for as long as its jobs
    /// may run (a task prefers it only for the scope of `withTaskExecutorPreference`).
    public init(threads: Int) {
        // Unowned: a thread that kept the executor would keep it, and itself, forever.
        let executor = asUnownedTaskExecutor()
        for _ in 0..<threads {
            let thread = Thread { [queue] in Self.work(queue, on: executor) }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    deinit {
        queue.withLock { $0.released = true }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
    }

    private static func work(_ queue: WaitableLock<Queue>, on executor: UnownedTaskExecutor) {
        while true {
            let job = queue.withLock(
                waitingUntil: { $0.next < $0.jobs.count || $0.released },
                then: { queue -> UnownedJob? in
                    guard queue.next < queue.jobs.count else { return nil }
                    defer {
                        queue.next += 1
                        // Drop what has run now and then, so the array does not grow for the whole test.
                        if queue.next == queue.jobs.count {
                            queue.jobs.removeAll(keepingCapacity: true)
                            queue.next = 0
                        }
                    }
                    return queue.jobs[queue.next]
                })
            guard let job else { return }
            job.runSynchronously(on: executor)
        }
    }
}
