import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// The waiting prefetches' order and lookups (`PrefetchQueue`), without a manager: highest priority
/// first, oldest first among equals, one entry per data key and decoder, and a heap that stale
/// tickets cannot grow without bound.
@Suite struct PrefetchQueueTests {
    private static func item(_ path: String, _ priority: LoadPriority, _ sequence: UInt64, decoder: Bool = false) -> PrefetchItem {
        PrefetchItem(
            request: ObjectRequest(url: URL(string: "http://127.0.0.1/\(path)")!),
            decoder: decoder ? AnyObjectDecoder(BlobDecoder()) : nil, priority: priority, sequence: sequence)
    }

    private static func drain(_ queue: inout PrefetchQueue) -> [String] {
        var paths: [String] = []
        while let next = queue.popNext() { paths.append(next.request.url.lastPathComponent) }
        return paths
    }

    @Test func itemsComeOutHighestPriorityFirstAndInArrivalOrderWithinOne() {
        var queue = PrefetchQueue()
        for (sequence, (path, priority)) in [("a", LoadPriority.low), ("b", .normal), ("c", .low), ("d", .high), ("e", .normal)]
            .enumerated()
        {
            queue.append(Self.item(path, priority, UInt64(sequence)))
        }
        #expect(queue.count == 5)
        #expect(Self.drain(&queue) == ["d", "b", "e", "a", "c"])
        #expect(queue.isEmpty)
    }

    @Test func aNewPriorityMovesAnItemButKeepsItsPlaceAmongEquals() {
        var queue = PrefetchQueue()
        for (sequence, path) in ["a", "b", "c", "d"].enumerated() { queue.append(Self.item(path, .low, UInt64(sequence))) }
        // c goes up; b goes up after it, but arrived first, so it starts first among the two.
        let raisedC = queue.reprioritize(Self.item("c", .low, 0).identity, to: .high)
        let raisedB = queue.reprioritize(Self.item("b", .low, 0).identity, to: .high)
        let raisedMissing = queue.reprioritize(Self.item("z", .low, 0).identity, to: .high)
        #expect(raisedC && raisedB && !raisedMissing)
        #expect(queue.count == 4)
        #expect(Self.drain(&queue) == ["b", "c", "a", "d"])
    }

    @Test func theSameBytesWithAnotherDecoderAreAnotherItem() {
        var queue = PrefetchQueue()
        queue.append(Self.item("a", .low, 0))
        queue.append(Self.item("a", .low, 1, decoder: true))
        #expect(queue.count == 2)
        let raised = queue.reprioritize(Self.item("a", .low, 0, decoder: true).identity, to: .high)
        let first = queue.popNext()
        let second = queue.popNext()
        let third = queue.popNext()
        #expect(raised && first?.decoder != nil && second != nil && second?.decoder == nil && third == nil)
    }

    @Test func droppedItemsNeverComeOutAndMayBeQueuedAgain() {
        var queue = PrefetchQueue()
        for (sequence, path) in ["a", "b", "c"].enumerated() { queue.append(Self.item(path, .low, UInt64(sequence))) }
        queue.removeAll { $0.hasSuffix("/b") }
        #expect(queue.count == 2)
        queue.append(Self.item("b", .veryLow, 9))
        #expect(Self.drain(&queue) == ["a", "c", "b"])
        queue.append(Self.item("x", .low, 10))
        queue.removeAll()
        let left = queue.popNext()
        #expect(left == nil)
    }

    @Test func reprioritizingOverAndOverKeepsTheQueueCorrectAndBounded() {
        var queue = PrefetchQueue()
        for sequence in 0..<10 { queue.append(Self.item("k\(sequence)", .low, UInt64(sequence))) }
        let priorities = LoadPriority.allCases
        for round in 0..<10_000 {
            _ = queue.reprioritize(Self.item("k\(round % 10)", .low, 0).identity, to: priorities[round % priorities.count])
        }
        #expect(queue.heapCount <= 2 * queue.count + 65)
        // Round 9,990 + i set k<i> last: k0–k9 to priorities[i % 5] (0, 1, 2, 3, 4, 0, 1, 2, 3, 4).
        #expect(Self.drain(&queue) == ["k4", "k9", "k3", "k8", "k2", "k7", "k1", "k6", "k0", "k5"])
    }
}
