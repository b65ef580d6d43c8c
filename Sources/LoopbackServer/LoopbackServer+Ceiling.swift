import Foundation
import ManagedCacheLocking

extension LoopbackServer {
    /// Measures how many requests per second a fresh, unshaped server answers on this machine.
    ///
    /// Starts a server whose every path answers `200` with `bodySize` bytes, opens
    /// `concurrency` keep-alive connections with raw sockets from this process (not URLSession),
    /// sends `requests` GETs spread over them, checks every response, and returns requests
    /// divided by wall-clock seconds. Benchmarks report it next to their own rate to show the
    /// server is not their bottleneck. Client and server share the machine's cores, so this is
    /// a lower bound on the server's ceiling.
    public static func measureCeiling(requests: Int = 20_000, concurrency: Int = 6, bodySize: Int = 1_024) throws -> Double {
        let connections = max(1, min(concurrency, requests))
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = Data((0..<max(0, bodySize)).map { UInt8(truncatingIfNeeded: $0) })
        server.setFallback { _ in .ok(body) }

        let failure = Lock<LoopbackServerError?>(nil)
        let finished = DispatchGroup()
        let startTime = DispatchTime.now().uptimeNanoseconds
        for index in 0..<connections {
            let share = requests / connections + (index < requests % connections ? 1 : 0)
            finished.enter()
            let thread = Thread { [port = server.port] in
                defer { finished.leave() }
                do throws(LoopbackServerError) {
                    var client = try CeilingClient(port: port, timeout: 10)
                    for request in 0..<share {
                        let length = try client.get("/ceiling/\(index)/\(request)")
                        guard length == body.count else {
                            throw .unexpectedResponse("body of \(length) bytes, expected \(body.count)")
                        }
                    }
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                }
            }
            thread.name = "LoopbackServer ceiling client \(index)"
            thread.start()
        }
        finished.wait()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - startTime) / 1e9
        if let error = failure.withLock({ $0 }) { throw error }
        return Double(requests) / max(seconds, 1e-9)
    }
}
