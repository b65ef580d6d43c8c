import Dispatch
import Foundation
import LoopbackServer
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

#if !canImport(Darwin)
/// How `URLSessionDataLoader` cancels its `URLSessionTask`s on Linux: from the session's delegate
/// queue, never while the session delivers the task's end, and never to a task whose end has been
/// delivered. (FoundationNetworking stops the process when a `cancel()` races that delivery; the
/// soak hit it. Apple's `URLSession` has no such race and its tasks are cancelled directly.)
@Suite struct TaskCancellationTests {
    /// Counts the responses the loader hands it.
    final class Receiver: DataLoadReceiver {
        private let responses = Lock(0)
        var responseCount: Int { responses.withLock { $0 } }

        func didReceive(response: DataLoadResponse) throws { responses.withLock { $0 += 1 } }

        func didReceive(_ chunk: Data) throws {}
    }

    @Test func aCancellationArrivingWhileTheSessionDeliversTheEndIsNotSentToTheEndedTask() async throws {
        let server = try LoopbackServer()
        server.setRoute("/small", .ok(Data("small".utf8)))
        let loader = URLSessionDataLoader()
        // The session's delivery of the task's end waits here until the load has been cancelled.
        let delivering = Lock(false)
        let cancelled = DispatchSemaphore(value: 0)
        loader.whenDeliveringATasksEnd {
            delivering.withLock { $0 = true }
            _ = cancelled.wait(timeout: .now() + waitBound)
        }
        let load = Task { try await loader.load(DataLoadRequest(url: server.url("/small")), receiver: Receiver()) }
        #expect(await waitUntil { delivering.withLock { $0 } })
        load.cancel()
        cancelled.signal()
        _ = try? await load.value  // the body had arrived: it may end either way

        #expect(await waitUntil { loader.cancellationCounts != TaskCancellationCounts() })
        #expect(
            loader.cancellationCounts == TaskCancellationCounts(sentToTask: 0, taskHadEnded: 1),
            "the cancellation waited for the delivery of the end, then found the task ended")
        #expect(await waitUntil { loader.transfersInFlight == 0 })
    }

    @Test func cancellingARunningTransferCancelsItsTask() async throws {
        let server = try LoopbackServer()
        server.setRoute("/stall", .ok(fixtureBody("stall", count: 10_000)).behaving(.stall(afterBodyBytes: 100)))
        let loader = URLSessionDataLoader()
        let receiver = Receiver()
        // A long backstop timeout: the transfer must still be running when the test cancels it.
        let load = Task { try await loader.load(DataLoadRequest(url: server.url("/stall"), timeout: 300), receiver: receiver) }
        #expect(await waitUntil { receiver.responseCount == 1 })
        load.cancel()
        await #expect(throws: ManagedCacheError.self) { try await load.value }
        #expect(await waitUntil { loader.cancellationCounts.sentToTask == 1 })
        #expect(loader.cancellationCounts.taskHadEnded == 0)
        #expect(await waitUntil { loader.transfersInFlight == 0 }, "the session reported the cancelled task's end")
    }
}
#endif
