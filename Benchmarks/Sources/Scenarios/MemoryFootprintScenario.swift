import Foundation
import LoopbackServer

/// 10,000 objects of 100 KB downloaded from a loopback server (in this process) and decoded
/// through a manager whose memory cache is limited to 50 MiB, in a child process of this
/// benchmark (so nothing else shares its resident memory): the peak resident memory may exceed
/// the idle child by at most the limit plus 25 %.
struct MemoryFootprintScenario: BenchmarkScenario {
    let identifier = "memory-footprint"
    let usesNetwork = true

    /// The memory cache's byte limit.
    static let costLimit = 50 << 20
    /// Size of every object.
    static let objectSize = 100_000

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let objects = context.pick(full: 10_000, quick: 3_000)
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = Data((0..<Self.objectSize).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        server.setFallback { request in request.path.hasPrefix("/memory/") ? .ok(body) : nil }
        var results: [MemoryFootprintResult] = []
        var sessionGrowth = Samples()
        for _ in 0..<context.pick(full: 3, quick: 1) {
            results.append(try runChild(server: server.baseURL, manager: true, objects: objects))
            sessionGrowth.append(Double(try runChild(server: server.baseURL, manager: false, objects: objects).growthBytes))
        }
        var growth = Samples()
        for result in results { growth.append(Double(result.growthBytes)) }
        let median = results.sorted { $0.growthBytes < $1.growthBytes }[results.count / 2]
        let ratio = growth.median / Double(Self.costLimit)
        let decodesOK = results.allSatisfy { $0.decodes == objects }
        return [
            ResultRow(
                scenario: "memory: \(Format.grouped(objects)) objects of 100 KB through a cache limited to 50 MiB",
                ours: "peak − idle: \(Format.median(growth, Format.bytes))",
                baseline: "the limit: \(Format.bytes(Double(Self.costLimit)))",
                ratio: Format.ratio(ratio), target: "≤ 1.25× (limit + 25 %)", met: ratio <= 1.25 && decodesOK,
                notes: [
                    "objects downloaded from a loopback server in the parent process (6 at a time, `async` API) and "
                        + "decoded to `Payload`s holding their bytes, in a child process; the median run: idle \(Format.bytes(Double(median.idleBytes))), "
                        + "peak (VmHWM, restarted at idle: \(median.peakWasReset)) \(Format.bytes(Double(median.peakBytes))), "
                        + "end \(Format.bytes(Double(median.finalBytes))) with \(Format.grouped(median.cachedCount)) objects / "
                        + "\(Format.bytes(Double(median.cachedCost))) cached, \(Format.grouped(median.decodes)) decodes in "
                        + "\(Format.seconds(median.seconds)); \(results.count) runs"
                ]),
            ResultRow(
                scenario: "(diagnostic) the same downloads through raw `URLSession`, keeping nothing",
                ours: "peak − idle: \(Format.median(sessionGrowth, Format.bytes))",
                baseline: "the limit: \(Format.bytes(Double(Self.costLimit)))",
                ratio: Format.ratio(sessionGrowth.median / Double(Self.costLimit)), target: "—", met: nil,
                notes: [
                    "what FoundationNetworking alone adds over \(Format.grouped(objects)) requests in a child "
                        + "process like the one above: it grows with the number of requests, and counts inside the 25 % margin"
                ]),
        ]
    }

    /// Runs one child process and parses its result.
    private func runChild(server: URL, manager: Bool, objects: Int) throws -> MemoryFootprintResult {
        let run = try ChildRun.ofThisProgram(
            arguments: MemoryFootprintChild.arguments(
                server: server, manager: manager, objects: objects, objectSize: Self.objectSize, costLimit: Self.costLimit))
        guard run.status == 0, let result = MemoryFootprintResult(output: run.output) else {
            throw BenchmarkFailure("memory child exited with \(run.status): \(run.output.suffix(300))")
        }
        return result
    }
}
