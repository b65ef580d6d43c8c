import Foundation
import LoopbackServer

/// Streaming memory: one 200 MiB download from a loopback server in this
/// process, at full speed, in a child process of this benchmark: into a `FileCache` (the
/// decoder takes the entry's file), and without a file cache (the body goes to a temporary file
/// the decoder takes). The child's peak resident memory must stay below 64 MiB above its idle
/// size. A third child downloads with raw `URLSession` and a delegate writing each chunk to a
/// file: what FoundationNetworking holds when nothing slows it down.
struct StreamingMemoryScenario: BenchmarkScenario {
    let identifier = "streaming-memory"
    let usesNetwork = true

    /// The bound on peak − idle.
    static let bound = 64 << 20

    struct Result {
        var growth: Int
        var seconds: Double
        var size: Int
        var reset: Bool

        init?(output: String) {
            guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("streaming-result ") }) else { return nil }
            var fields: [String: String] = [:]
            for pair in line.split(separator: " ").dropFirst() {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            guard let idle = fields["idle"].flatMap({ Int($0) }), let peak = fields["peak"].flatMap({ Int($0) }) else { return nil }
            growth = peak - idle
            seconds = fields["seconds"].flatMap { Double($0) } ?? 0
            size = fields["size"].flatMap { Int($0) } ?? -1
            reset = fields["reset"] == "true"
        }
    }

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let mebibytes = context.pick(full: 200, quick: 100)
        let byteCount = mebibytes << 20
        var generator = SeededGenerator(seed: 0x57AE)
        let block = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        var body = Data(capacity: byteCount)
        for number in 0..<mebibytes {
            var numbered = block
            withUnsafeBytes(of: UInt64(number).littleEndian) { numbered.replaceSubrange(0..<8, with: $0) }
            body.append(numbered)
        }
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setRoute("/large", .ok(body))
        server.setRoute("/large/warm-up", .ok(block))
        let scratch = try ScratchDirectory(prefix: "streaming")
        let clients = ["cache", "nocache", "session"]
        var results: [String: [Result]] = [:]
        for _ in 0..<context.pick(full: 3, quick: 1) {
            for client in clients {
                let directory = scratch.appending("\(client)-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let result = try runChild(server.url("/large"), client: client, directory: directory, byteCount: byteCount)
                guard result.size == byteCount else {
                    throw BenchmarkFailure("\(client): the file has \(result.size) of \(byteCount) bytes")
                }
                results[client, default: []].append(result)
            }
        }
        func growth(_ client: String) -> Samples {
            var samples = Samples()
            for result in results[client] ?? [] { samples.append(Double(result.growth)) }
            return samples
        }
        func speed(_ client: String) -> String {
            var samples = Samples()
            for result in results[client] ?? [] { samples.append(Double(byteCount) / result.seconds / 1e6) }
            return Format.median(samples) { Format.number($0) + " MB/s" }
        }
        let bound = Double(Self.bound)
        let reset = results.values.joined().allSatisfy(\.reset)
        func row(_ title: String, _ client: String, target: Bool, _ notes: [String] = []) -> ResultRow {
            let samples = growth(client)
            return ResultRow(
                scenario: title, ours: "peak − idle: \(Format.median(samples, Format.bytes))",
                baseline: "the bound: \(Format.bytes(bound))", ratio: Format.ratio(samples.median / bound),
                target: target ? "< 1× (below 64 MiB above idle)" : "—", met: target ? samples.maximum < bound : nil,
                notes: notes)
        }
        let fileSystem = scratch.fileSystem
        return [
            row(
                "\(mebibytes) MiB download into a `FileCache` at full loopback speed", "cache", target: true,
                [
                    "one download from a loopback server in the parent process, in a child process (VmHWM restarted at idle "
                        + "after a 1 MiB warm-up download: \(reset)); `FileURLDecoder`; cache on \(fileSystem); median (min–max) of "
                        + "\(growth("cache").count) runs; the target holds for the largest; speed \(speed("cache"))"
                ]),
            row(
                "\(mebibytes) MiB download without a file cache, to a file URL", "nocache", target: true,
                [
                    "the same with no file cache: the body past `inMemoryThreshold` goes to a temporary file on \(fileSystem), "
                        + "which `FileURLDecoder` takes; speed \(speed("nocache"))"
                ]),
            row(
                "(diagnostic) raw `URLSession`, a delegate writing each chunk to a file", "session", target: false,
                [
                    "FoundationNetworking queues every chunk for the delegate without limit: what it holds when the disk is "
                        + "slower than the socket; speed \(speed("session"))"
                ]),
        ]
    }

    private func runChild(_ url: URL, client: String, directory: URL, byteCount: Int) throws -> Result {
        let run = try ChildRun.ofThisProgram(
            arguments: StreamingMemoryChild.arguments(url: url, client: client, directory: directory, byteCount: byteCount),
            // The temporary file of the download without a file cache goes into the scratch directory.
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": directory.path]) { $1 })
        guard run.status == 0, let result = Result(output: run.output) else {
            throw BenchmarkFailure("streaming child (\(client)) exited with \(run.status): \(run.output.suffix(300))")
        }
        return result
    }
}
