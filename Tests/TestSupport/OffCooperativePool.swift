import Dispatch
import Testing

/// Runs each test of a suite on a dispatch-backed executor instead of Swift's cooperative pool.
///
/// The file-cache suites do seconds of blocking disk work and wait for child processes. On a
/// 2-core machine the cooperative pool has two threads; if those tests held them, every other
/// test's tasks (and its bounded waits) would stall behind them. The test still runs in its own
/// task, so `#expect` and `Issue.record` are attributed as usual.
public struct OffCooperativePoolTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(BlockingTestExecutor.shared) {
            try await function()
        }
    }
}

extension Trait where Self == OffCooperativePoolTrait {
    /// Runs the tests on threads of their own (see `OffCooperativePoolTrait`).
    public static var offCooperativePool: Self { OffCooperativePoolTrait() }
}

/// A task executor over a concurrent dispatch queue, which adds threads when its threads block.
final class BlockingTestExecutor: TaskExecutor {
    static let shared = BlockingTestExecutor()
    private let queue = DispatchQueue(label: "TestSupport.blocking", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
