import ChildProcesses
import Foundation
import LoopbackServer
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The soak's loopback server: a few hundred keys, most served well, some slowly, some answering
/// `404` or `503`, some resetting the connection mid-body on their first request (then served,
/// ranges honoured, so the next load resumes).
///
/// A key's route is its path: `/k/<index>`. What the key does depends on its index, so the
/// workload knows which outcome is right for each key.
enum SoakRoutes {
    enum Kind: Sendable {
        case ok, slow, notFound, unavailable, resetOnce
    }

    static func kind(ofKey index: Int) -> Kind {
        switch index % 20 {
        case 0: .notFound
        case 1: .unavailable
        case 2, 3: .resetOnce
        case 4, 5, 6, 7, 8, 9: .slow
        default: .ok
        }
    }

    /// The body of key `index`: `size(index)` deterministic bytes and a checksum the decoder checks.
    static func payload(ofKey index: Int) -> Data {
        let count = 8_000 + (index * 7_919) % 56_000
        var state = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes = [UInt8](repeating: 0, count: count)
        for position in bytes.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[position] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return Data(bytes)
    }

    /// A route of the URLSession leak probe (`URLSessionLeakProbe`): the head and a few bytes,
    /// then nothing, so a task to it is still running when the probe cancels it.
    static func stalledProbePath(_ index: Int) -> String { stalledProbePrefix + String(index) }
    private static let stalledProbePrefix = "/probe/stalled/"

    static func start() throws -> LoopbackServer {
        // Keeps no request log: the soak measures the engine's memory, not the server's.
        let server = try LoopbackServer(configuration: .init(recordedRequestsPerPath: 0))
        let resetDone = Lock<Set<Int>>([])
        server.setFallback { request in
            if request.path.hasPrefix(stalledProbePrefix) {
                return .ok(Data(count: 64_000)).behaving(.stall(afterBodyBytes: 4_000))
            }
            let parts = request.path.split(separator: "/")
            guard parts.count == 2, parts[0] == "k", let index = Int(parts[1]) else { return nil }
            let ok = LoopbackResponse.ok(payload(ofKey: index)).caching(etag: "\"k\(index)\"")
            switch kind(ofKey: index) {
            case .ok: return ok
            case .slow: return ok.behaving(.drip(chunkSize: 4_000, interval: 0.02))
            case .notFound: return .status(404)
            case .unavailable: return .status(503)
            case .resetOnce:
                let first = resetDone.withLock { $0.insert(index).inserted }
                return first ? ok.behaving(.reset(afterBodyBytes: 4_000)) : ok.behaving(.drip(chunkSize: 8_000, interval: 0.01))
            }
        }
        return server
    }
}

/// The soak's server, in a process of its own (this program, started with `--serve`): its
/// connection threads and sockets are not the app's, so the soak's thread, descriptor and memory
/// figures are the engine's and the harness's alone. The child writes its counts to a file every
/// 50 ms, and ends when this process does (it watches its parent).
final class SoakServer: Sendable {
    let port: Int
    private let child: SpawnedProcess
    private let statsFile: URL

    /// Starts the child and waits for its port.
    init(statsFile: URL) throws {
        self.statsFile = statsFile
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        child = try SpawnedProcess(
            executable: executable, arguments: ["--serve", String(getpid()), statsFile.path], standardOutput: .pipe)
        var line = Data()
        var byte: UInt8 = 0
        while let descriptor = child.outputDescriptor, read(descriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            child.send(SIGKILL)
            child.waitUntilExit()
            throw SoakServerError(description: "the server process said \"\(String(decoding: line, as: UTF8.self))\", not its port")
        }
        self.port = port
    }

    /// Ends the child.
    func stop() {
        child.send(SIGTERM)
        child.waitUntilExit()
        try? FileManager.default.removeItem(at: statsFile)
    }

    func url(_ path: String) -> URL { Self.url(port: port, path) }

    /// `path` on the server listening on `port` (the probe's child knows only the port).
    static func url(port: Int, _ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// The child's last counts: requests received, connections open (at most 50 ms old).
    private var counts: (total: Int, open: Int) {
        guard let text = try? String(contentsOf: statsFile, encoding: .utf8) else { return (0, 0) }
        let numbers = text.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard numbers.count == 2 else { return (0, 0) }
        return (numbers[0], numbers[1])
    }

    var totalRequestCount: Int { counts.total }
    /// Connections open (0 until the child has written its counts once).
    var openConnectionCount: Int { counts.open }

    /// The child's life, when this program was started with `--serve <parent> <stats file>`:
    /// serves, writes its counts every 50 ms, and exits once its parent is gone.
    static func serveIfAsked(_ arguments: [String]) {
        guard arguments.first == "--serve", arguments.count == 3, let parent = pid_t(arguments[1]) else { return }
        let statsFile = URL(fileURLWithPath: arguments[2])
        let server: LoopbackServer
        do { server = try SoakRoutes.start() } catch {
            FileHandle.standardOutput.write(Data("cannot start: \(error)\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("\(server.port)\n".utf8))
        let scratch = statsFile.appendingPathExtension("new")
        while getppid() == parent {
            try? Data("\(server.totalRequestCount) \(server.openConnectionCount)".utf8).write(to: scratch)
            _ = rename(scratch.path, statsFile.path)
            usleep(50_000)
        }
        exit(0)
    }
}

struct SoakServerError: Error, CustomStringConvertible {
    var description: String
}
