import Foundation
import LoopbackServer
import ManagedCache

/// 1,000 users of one URL managed at once from four threads while the server holds the answer:
/// the server must see exactly one request and the decoder run exactly once, and every user must
/// receive the same instance.
struct CoalescingScenario: BenchmarkScenario {
    let identifier = "coalescing"
    let usesNetwork = true

    /// Users per run.
    static let userCount = 1_000
    /// How long the server holds the response, so every user arrives while it loads.
    static let serverDelay = 0.3

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = Data((0..<16_384).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let runs = context.pick(full: 3, quick: 2)
        var requestCounts: [Int] = []
        var decodeCounts: [Int] = []
        var deliveryTimes = Samples()
        var problems: [String] = []
        for run in 0..<runs {
            let path = "/coalescing/\(run)/object.bin"
            server.setRoute(path, LoopbackResponse.ok(body).behaving(.delayed(seconds: Self.serverDelay)))
            let decoder = PayloadDecoder()
            let manager = ObjectManager()
            let request = ObjectRequest(url: server.url(path))
            let users = (0..<Self.userCount).map { _ in ObjectUser(request: request, decoder: decoder) }
            let start = Stopwatch.now()
            let threads = 4
            DispatchQueue.concurrentPerform(iterations: threads) { part in
                for index in stride(from: part, to: users.count, by: threads) { manager.manage(users[index]) }
            }
            let deadline = Stopwatch.now() + 10_000_000_000
            while users.contains(where: { $0.object == nil }), Stopwatch.now() < deadline {
                Thread.sleep(forTimeInterval: 0.002)
            }
            deliveryTimes.append(Stopwatch.seconds(since: start))
            let delivered = users.filter { $0.object != nil }.count
            if delivered != users.count { problems.append("run \(run): \(delivered) of \(users.count) users got the object") }
            if let first = users[0].object, users.contains(where: { $0.object !== first }) {
                problems.append("run \(run): users received different instances")
            }
            requestCounts.append(server.requestCount(for: path))
            decodeCounts.append(decoder.counter.count)
        }
        let met = problems.isEmpty && requestCounts.allSatisfy { $0 == 1 } && decodeCounts.allSatisfy { $0 == 1 }
        let counts = zip(requestCounts, decodeCounts).map { "\($0)/\($1)" }.joined(separator: ", ")
        return [
            ResultRow(
                scenario: "\(Format.grouped(Self.userCount)) users of one URL at once",
                ours: "requests/decodes per run: \(counts)", baseline: "—", ratio: "—",
                target: "exactly 1 request and 1 decode", met: met,
                notes: [
                    "counted by the server (requests for the path) and by the decoder, over \(runs) runs; "
                        + "managed from 4 threads while the server held the answer \(Format.seconds(Self.serverDelay)); "
                        + "all users received one shared instance: \(problems.isEmpty ? "yes" : problems.joined(separator: "; ")); "
                        + "first manage to last delivery \(Format.median(deliveryTimes, Format.seconds))"
                ])
        ]
    }
}
