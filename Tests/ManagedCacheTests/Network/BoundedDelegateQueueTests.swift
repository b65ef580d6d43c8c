import Foundation
import TestSupport
import Testing

@testable import ManagedCache

#if !canImport(Darwin)
/// The back-pressure of `URLSessionDataLoader` on Linux (what keeps a large download out of memory): the delegate queue
/// holds its producer (FoundationNetworking's work queue) while too many chunks wait, and never
/// deadlocks when a consumer waits for that producer.
@Suite(.offCooperativePool) struct BoundedDelegateQueueTests {
    /// A queue whose limit is 16 operations (chunks of 1/16 of the byte budget).
    private func makeQueue() -> BoundedDelegateQueue {
        let queue = BoundedDelegateQueue()
        queue.noteChunk(BoundedDelegateQueue.byteBudget / 16)
        #expect(queue.limit == 16)
        return queue
    }

    @Test func aSlowConsumerHoldsTheProducerBack() {
        let queue = makeQueue()
        // The consumer is slow, never stuck: a machine that deschedules it past the stall timeout
        // must not let the limit grow here (that growth is the next test's). Under
        // AddressSanitizer on a busy machine it once did, four times over, and the peak went past
        // `(1 + maximumStalls) × limit` by the one operation per timeout allowed beyond that.
        queue.stallTimeout = 600
        let producer = DispatchQueue(label: "producer")
        let ran = Counter()
        producer.async {
            for _ in 0..<200 {
                queue.addOperation {
                    usleep(500)
                    ran.increment()
                }
            }
        }
        #expect(waitUntilBlocking { ran.count == 200 })
        #expect(queue.waitCount > 0)
        // At most the limit, and the producer's own operation while it waits.
        #expect(queue.peakQueuedCount <= queue.limit + 1)
    }

    @Test func aConsumerWaitingForTheProducerDoesNotDeadlock() {
        let queue = makeQueue()
        let workQueue = DispatchQueue(label: "work")
        let ran = Counter()
        workQueue.async {
            // The first operation waits for the work queue, which is busy adding the rest: as a
            // delegate callback calling `URLSessionTask.resume()` would.
            queue.addOperation {
                workQueue.sync {}
                ran.increment()
            }
            for _ in 0..<40 {
                queue.addOperation { ran.increment() }
            }
        }
        #expect(waitUntilBlocking { ran.count == 41 })
    }

    /// A cancellation (added without waiting) that waits for the producer, as
    /// `URLSessionTask.cancel()` waits for FoundationNetworking's work queue, while that producer
    /// is held back: run `withoutHoldingProducers`, it lets the producer go on at once, without
    /// waiting for a stall timeout (made far longer than the test's bounded wait here), which
    /// would stall every transfer of the process.
    @Test func aCancellationThatWaitsForTheHeldProducerReleasesIt() {
        let queue = makeQueue()
        queue.stallTimeout = 600
        let workQueue = DispatchQueue(label: "work")
        let ran = Counter()
        let gate = DispatchSemaphore(value: 0)
        queue.addOperation { _ = gate.wait(timeout: .now() + waitBound) }
        queue.addOperationWithoutWaiting {
            queue.withoutHoldingProducers { workQueue.sync {} }
            ran.increment()
        }
        workQueue.async {
            for _ in 0..<40 {
                queue.addOperation { ran.increment() }
            }
        }
        #expect(waitUntilBlocking { queue.waitCount > 0 }, "the producer is held back")
        gate.signal()
        #expect(waitUntilBlocking { ran.count == 41 })
    }

    @Test func operationsAddedFromInsideTheQueueAreNeverHeld() {
        let queue = makeQueue()
        let ran = Counter()
        queue.addOperation {
            for _ in 0..<100 {
                queue.addOperation { ran.increment() }
            }
            ran.increment()
        }
        #expect(waitUntilBlocking { ran.count == 101 })
        #expect(queue.waitCount == 0)
    }
}
#endif
