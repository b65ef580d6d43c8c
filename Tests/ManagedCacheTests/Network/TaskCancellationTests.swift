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
/// delivered; and a redirect of a cancelled task is not followed. (FoundationNetworking stops the
/// process when a `cancel()` races that delivery, the soak hit it; and when a redirect is answered
/// after the task was cancelled, the contended test runs hit it. Apple's `URLSession` has neither
/// race and its tasks are cancelled directly.)
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
            _ = cancelled.wait(timeout: .now() + holdBound)
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

    /// Holds the session's delegate queue: its response callback waits until released.
    final class HoldingReceiver: DataLoadReceiver {
        private let isHolding = Lock(false)
        private let released = DispatchSemaphore(value: 0)
        var holding: Bool { isHolding.withLock { $0 } }

        func release() { released.signal() }

        func didReceive(response: DataLoadResponse) throws {
            isHolding.withLock { $0 = true }
            _ = released.wait(timeout: .now() + holdBound)
        }

        func didReceive(_ chunk: Data) throws {}
    }

    /// The sequence that stopped the process: a load is cancelled while the redirect its server
    /// sent waits for the delegate's answer. Here the delegate queue is held while the
    /// cancellation and then the redirect's question are queued on it, in that order; released,
    /// the cancellation reaches the task first and the question finds the task cancelled.
    @Test func aRedirectOfATaskCancelledMeanwhileIsNotFollowed() async throws {
        let server = try LoopbackServer()
        // Headers, then nothing: its response callback is the one operation it queues.
        server.setRoute("/hold", .ok(fixtureBody("hold", count: 1_000)).behaving(.stall(afterBodyBytes: 0)))
        let redirect = GatedRoute(server, path: "/old", response: .redirect(to: "/new"))
        server.setRoute("/new", .ok(Data("new".utf8)))
        let loader = URLSessionDataLoader()

        let holder = HoldingReceiver()
        defer { holder.release() }
        let holding = Task { try await loader.load(DataLoadRequest(url: server.url("/hold"), timeout: 300), receiver: holder) }
        #expect(await waitUntil { holder.holding }, "the delegate queue is held")
        let load = Task { try await loader.load(DataLoadRequest(url: server.url("/old"), timeout: 300), receiver: Receiver()) }
        #expect(await waitUntil { redirect.arrivals == 1 }, "the request for /old is on the wire")
        load.cancel()
        #expect(
            await waitUntil { loader.delegateOperationsQueued == 2 },
            "the held callback and the cancellation: \(loader.delegateOperationsQueued)")
        redirect.open()
        #expect(
            await waitUntil { loader.delegateOperationsQueued == 3 },
            "and, behind them, the redirect's question: \(loader.delegateOperationsQueued)")
        holder.release()

        await #expect(throws: (any Error).self) { try await load.value }
        #expect(await waitUntil { loader.cancellationCounts.redirectsLeftUnanswered == 1 })
        #expect(loader.cancellationCounts == TaskCancellationCounts(sentToTask: 1, taskHadEnded: 0, redirectsLeftUnanswered: 1))
        #expect(server.requestCount(for: "/new") == 0, "the redirect was not followed")
        holding.cancel()
        await #expect(throws: (any Error).self) { try await holding.value }
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
