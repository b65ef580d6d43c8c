import Foundation

#if !canImport(Darwin)
/// The delegate queue of `URLSessionDataLoader`'s session on Linux: a serial `OperationQueue`
/// that makes FoundationNetworking wait while too many delivered chunks are queued, so that a
/// download is never received faster than its receiver writes it (back-pressure).
///
/// Why it is needed: FoundationNetworking's libcurl callback hands every received chunk to the
/// delegate queue with `addOperation` and tells libcurl to go on at once; it cannot pause a
/// transfer (`_NativeProtocol` stops with "Need to solve pausing receive"). When the delegate is
/// slower than the socket (writing a 200 MB download to disk over fast loopback), every chunk
/// waits in the queue: the whole body in memory. Here `addOperation`, which libcurl's callback
/// calls on the session's work queue, waits while more than `limit` operations are queued, so
/// libcurl stops reading the socket, TCP's window closes and the server slows down.
///
/// The wait is bounded so that it can never deadlock: FoundationNetworking serves every session
/// of the process from one serial work queue, and a few of its calls (`resume()`, `priority`,
/// creating a task, `invalidateAndCancel()`) wait for that queue synchronously. A delegate
/// callback that made such a call (through user code, say) would wait for the work queue this
/// queue is holding, and no queued operation would finish. So when no operation has finished for
/// `stallTimeout`, the limit grows by one more `limit` (up to `maximumStalls` times) and the
/// clock starts again; the first operation that finishes brings it back. A stuck consumer gets
/// the work queue back within a few timeouts (libcurl returns to the work queue after a few
/// chunks); a consumer that is only slow (a disk stall) holds at most `(1 + maximumStalls) ×
/// limit` chunks, and past that lets one in per timeout. Operations added from inside one of the
/// queue's own operations are never held.
///
/// The operations do not go through `OperationQueue`'s own machinery: the queue keeps the blocks
/// in a list of its own, and a drain job on `deliveryQueue` runs them in order, many per job.
/// FoundationNetworking adds four per transfer of a small body (the response, the body's chunks,
/// the end), and calls `addOperation` on its work queue, the one serial queue that every transfer
/// of the process waits for. There `OperationQueue` made a `BlockOperation` and a dispatch work
/// item per block and took its locks six times (about 6,700 instructions), and starting and
/// finishing the operation on the delivering thread cost as much again; the list takes one lock
/// on each side. The `network` benchmark's loader ran about 62,000 fewer instructions per 16 KB
/// transfer (the whole process's, server included: 1,102 → 1,027 million for 1,200 transfers
/// under callgrind). FoundationNetworking uses only the block form of `addOperation` (6.3, and
/// its main branch in 2026); an `Operation` added some other way would still run on the serial
/// `deliveryQueue`, so never beside these blocks. Inside a block `OperationQueue.current` is not
/// this queue; nothing reads it there, and the queue tells its own operations apart by their
/// thread.
///
/// On Apple platforms `URLSession` limits what it buffers for a delegate itself: this class is
/// not compiled there and the loader uses a plain delegate queue.
final class BoundedDelegateQueue: OperationQueue, @unchecked Sendable {
    // Safe to be Sendable: `OperationQueue` is (its own state has its own lock); the counters
    // added here are only read or written between `condition.lock()` and `condition.unlock()`.

    /// The most bytes of delivered chunks to hold back, about.
    static let byteBudget = 8 << 20
    /// How long the consumer may make no progress before the limit grows, by default.
    static let stallTimeout: TimeInterval = 0.25
    /// How many times the limit grows by itself while the consumer makes no progress.
    static let maximumStalls = 3

    /// How long the consumer may make no progress before the limit grows (the tests lengthen it).
    var stallTimeout: TimeInterval {
        get { condition.withLock { _stallTimeout } }
        set { condition.withLock { _stallTimeout = newValue } }
    }

    private let condition = NSCondition()
    private var _stallTimeout = BoundedDelegateQueue.stallTimeout
    /// Calls of `withoutHoldingProducers` running now: producers are not held meanwhile.
    private var unheldRunning = 0
    private var queued = 0
    private var largestChunk = 16 << 10
    private var lastProgress = MonotonicInstant.now
    /// Stall timeouts since the consumer last made progress (the limit is `_limit * (1 + stalls)`).
    private var stalls = 0
    /// How many times a producer had to wait (for the tests and the benchmark).
    private var waits = 0
    private var peakQueued = 0
    /// Blocks admitted and not yet taken, in order: `outgoing` reversed, then `incoming` (a
    /// queue in two stacks).
    private var incoming: [@Sendable () -> Void] = []
    private var outgoing: [@Sendable () -> Void] = []
    /// Whether a drain job is queued on `deliveryQueue` or running.
    private var draining = false
    /// The thread running the drain, while it runs: an operation added there is the queue's own.
    private var drainThread: pthread_t?

    /// Blocks one drain job runs before it queues the next and lets its thread go, so that a long
    /// burst does not keep a thread of the user-initiated pool (about one per core, shared by
    /// every loader's delegate queue) to itself.
    private static let blocksPerDrain = 32

    /// The serial dispatch queue the operations run on. Held here: `OperationQueue` does not
    /// retain its `underlyingQueue`.
    ///
    /// Why one of its own: without it the operations run on a concurrent dispatch queue, that is
    /// on dispatch's default-QoS pool, which on Linux is also Swift's cooperative pool (one thread
    /// per core). While tasks computed without suspending, an app's or the test suite's, no chunk
    /// reached any receiver and every download of the process looked silent to the idle timeout
    /// (in CI, four to six dripping loads timed out after 2.5 s although their server sent every
    /// 0.1 s).
    ///
    /// Why it targets the user-initiated global queue: a serial queue without a target runs on
    /// dispatch's overcommit pool, which starts a thread whenever the queue has work and no idle
    /// thread is waiting (on a busy machine the idle ones may all be woken and not yet running),
    /// and keeps each while work comes within 5 s. FoundationNetworking's work queue is such a
    /// queue too; with the sessions' deliveries beside it, the soak (two sessions) kept 8 to 15
    /// overcommit threads, most of them idle, and 5 to 9 without them. The user-initiated pool is
    /// limited to about one thread per core (dispatch adds one when those block, in a disk
    /// stall): 2 in the soak. It is not the default-QoS pool that default-priority tasks fill;
    /// only `.high` (`.userInitiated`) tasks run on it, and on Linux `.userInteractive` work.
    private let deliveryQueue = DispatchQueue(
        label: "ManagedCache.URLSessionDataLoader.delegate", target: .global(qos: .userInitiated))

    override init() {
        super.init()
        maxConcurrentOperationCount = 1
        name = "ManagedCache.URLSessionDataLoader"
        underlyingQueue = deliveryQueue
    }

    /// The most operations held at once: the byte budget over the largest chunk seen.
    var limit: Int {
        condition.lock()
        defer { condition.unlock() }
        return _limit
    }

    private var _limit: Int { max(16, Self.byteBudget / max(1, largestChunk)) }

    /// How many times a producer had to wait so far.
    var waitCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return waits
    }

    /// Operations queued and not yet finished.
    var queuedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queued
    }

    /// The most operations queued at once so far (for the tests).
    var peakQueuedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return peakQueued
    }

    /// The delegate reports each chunk's size, so the limit follows the chunk size in use.
    func noteChunk(_ byteCount: Int) {
        condition.lock()
        if byteCount > largestChunk { largestChunk = byteCount }
        condition.unlock()
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        enqueue(block, mayWait: true)
    }

    /// Adds an operation without waiting, however many are queued: for work that only makes
    /// transfers end sooner (a cancellation), which the caller must not wait to send.
    func addOperationWithoutWaiting(_ block: @escaping @Sendable () -> Void) {
        enqueue(block, mayWait: false)
    }

    /// Counts `block` in (waiting first when `mayWait` and the queue is over its limit) and queues
    /// it, starting a drain unless one is queued or running.
    private func enqueue(_ block: @escaping @Sendable () -> Void, mayWait: Bool) {
        let startsDrain = admit(block, mayWait: mayWait)
        if startsDrain { deliveryQueue.async { [self] in drain() } }
    }

    /// Runs the queued blocks in order, one at a time, counting each out when it has run, until
    /// none is left or `blocksPerDrain` have run (then the next drain is queued).
    private func drain() {
        let thread = pthread_self()
        var ran = 0
        var next = condition.withLock { () -> (@Sendable () -> Void)? in
            drainThread = thread
            return takeNext(after: 0)
        }
        while let block = next {
            block()
            ran += 1
            next = condition.withLock { () -> (@Sendable () -> Void)? in
                finishedOne()
                return takeNext(after: ran)
            }
        }
    }

    /// The next block to run, or `nil` when the drain stops (`ran` blocks run so far): then either
    /// none is queued and no drain is running any more, or the next drain is queued. Called under
    /// the lock.
    private func takeNext(after ran: Int) -> (@Sendable () -> Void)? {
        if outgoing.isEmpty {
            guard !incoming.isEmpty else {
                draining = false
                drainThread = nil
                return nil
            }
            outgoing = incoming.reversed()
            incoming.removeAll(keepingCapacity: true)
        }
        guard ran < Self.blocksPerDrain else {
            drainThread = nil
            deliveryQueue.async { [self] in drain() }  // `draining` stays set: this is the drain
            return nil
        }
        return outgoing.popLast()
    }

    /// Runs `body`, from one of this queue's operations, without holding any producer meanwhile,
    /// for work that waits for the producer: FoundationNetworking's `URLSessionTask.cancel()`
    /// waits for its work queue, which is the producer. Held back, the producer and this queue
    /// would wait for each other until the stall timeout, and every transfer of the process with
    /// them. A producer waiting when `body` starts goes on at once.
    func withoutHoldingProducers<T>(_ body: () throws -> T) rethrows -> T {
        condition.withLock {
            unheldRunning += 1
            condition.broadcast()
        }
        defer { condition.withLock { unheldRunning -= 1 } }
        return try body()
    }

    /// Counts one more operation, waiting first while the queue is over its limit (see above)
    /// unless `mayWait` is `false`, then queues `block`. Returns whether the caller must queue a
    /// drain (none is queued or running).
    private func admit(_ block: @escaping @Sendable () -> Void, mayWait: Bool) -> Bool {
        let thread = pthread_self()
        condition.lock()
        defer {
            peakQueued = max(peakQueued, queued)
            condition.unlock()
        }
        let fromInside = !mayWait || drainThread.map { pthread_equal($0, thread) != 0 } == true
        if queued == 0 { lastProgress = .now }
        queued += 1
        waitWhileOverLimit(fromInside: fromInside)
        incoming.append(block)
        guard !draining else { return false }
        draining = true
        return true
    }

    /// Waits while the queue is over its limit (see above), unless `fromInside`. Called under the
    /// lock, with this operation counted.
    private func waitWhileOverLimit(fromInside: Bool) {
        guard !fromInside, unheldRunning == 0, queued > _limit * (1 + stalls) else { return }
        waits += 1
        LoadAccounting.backPressureWaitCount.withLock { $0 += 1 }
        while queued > _limit * (1 + stalls), unheldRunning == 0 {
            let stalled = MonotonicInstant.now.seconds(since: lastProgress)
            if stalled >= _stallTimeout {
                lastProgress = .now
                guard stalls < Self.maximumStalls else { return }  // one operation per timeout from here
                stalls += 1
                continue
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: _stallTimeout - stalled))
        }
    }

    /// One operation ended: the consumer made progress. Called under the lock.
    private func finishedOne() {
        queued -= 1
        lastProgress = .now
        stalls = 0
        condition.broadcast()
    }
}
#endif
