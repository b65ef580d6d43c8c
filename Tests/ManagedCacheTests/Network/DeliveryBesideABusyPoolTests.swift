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
/// receiver and every download of the process looked silent to the idle timeout: in CI, six
/// dripping loads timed out after 2.5 s although their server sent every 0.1 s. The child
/// process (`BusyPoolChild`) fills the pool and counts what is delivered meanwhile.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct DeliveryBesideABusyPoolTests {
    #if os(Linux)
    @Test func chunksArriveWhileEveryPoolThreadComputes() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        // One chunk every 50 ms for 20 s: the child needs five while the pool is full.
        server.setRoute("/drip", .ok(fixtureBody("drip", count: 400_000)).behaving(.drip(chunkSize: 1_000, interval: 0.05)))
        let process = Process()
        process.executableURL = try childExecutable(named: "BusyPoolChild")
        process.arguments = [server.url("/drip").absoluteString]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let ended = waitUntilBlocking(timeout: 300) { !process.isRunning }
        if !ended { process.terminate() }
        process.waitUntilExit()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(ended, "the child hung: \(lines)")
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(lines)")
        let delivered = lines.first { $0.hasPrefix("delivered-while-full ") }.flatMap { Int($0.dropFirst(21)) }
        #expect((delivered ?? 0) >= 5, "chunks delivered while every pool thread computed: \(lines)")
    }
    #endif
}
