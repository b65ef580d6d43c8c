import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A download's chunks reach their receiver while every thread of Swift's cooperative pool is
/// busy computing (Linux).
///
/// On Linux the cooperative pool is dispatch's default-QoS pool: one thread per core. An
/// `OperationQueue` runs its operations on a concurrent dispatch queue, the same pool, so while
/// tasks computed without suspending (an app's, or this suite's own) no chunk reached any
/// receiver and every download of the process looked silent to the idle timeout: in CI, four to six
/// dripping loads timed out after 2.5 s although their server sent every 0.1 s. The child
/// process (`BusyPoolChild`) fills the pool and counts what is delivered meanwhile.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct DeliveryBesideABusyPoolTests {
    #if os(Linux)
    @Test func chunksArriveWhileEveryPoolThreadComputes() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        // One chunk every 50 ms for 20 s: the child needs five while the pool is full.
        server.setRoute("/drip", .ok(fixtureBody("drip", count: 400_000)).behaving(.drip(chunkSize: 1_000, interval: 0.05)))
        let child = try runChild(named: "BusyPoolChild", arguments: [server.url("/drip").absoluteString], timeout: 300)
        #expect(child.ended, "the child hung: \(child.lines)")
        #expect(child.succeeded, "\(child.lines)")
        let delivered = child.value("delivered-while-full").flatMap { Int($0) }
        #expect((delivered ?? 0) >= 5, "chunks delivered while every pool thread computed: \(child.lines)")
    }
    #endif
}
