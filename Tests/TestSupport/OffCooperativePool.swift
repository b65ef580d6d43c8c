import Foundation
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
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) {  // portability-lint: allow checked just above
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
