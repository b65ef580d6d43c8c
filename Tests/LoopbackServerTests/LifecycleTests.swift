import Foundation
import LoopbackServer
import Testing

/// Starting, stopping and loading the server: stop() ends stalled connections, servers leave
/// nothing behind, concurrent requests are served correctly, keep-alive can be turned off.
@Suite struct LifecycleTests {
    @Test func stopClosesAStalledConnectionPromptly() async throws {
        let server = try LoopbackServer()
        server.setRoute("/stall", .ok(testBytes(10_000)).behaving(.stall(afterBodyBytes: 1_000)))
        // A raw connection, not URLSession: a URLSession request waits for FoundationNetworking's
        // one work queue, which every transfer of the process shares, and in the contended test
        // runs this request had not reached the server after a minute. A long receive timeout:
        // if stop() did not close the connection, the read would end by timing out instead
        // (after stop() the server's bytes and its close are already there: the read is short).
        let connection = try #require(RawConnection(port: server.port, receiveTimeout: 60))
        connection.send("GET /stall HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(await waitUntil { server.bodyBytesSent == 1_000 && server.openConnectionCount == 1 })
        server.stop()
        #expect(server.openConnectionCount == 0)
        #expect(server.runningThreadCount == 0)
        #expect(connection.readUntilClosed(), "the server closed the stalled connection")
        server.stop()  // idempotent
    }

    @Test func handlerCanStopTheServerMidRequest() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setHandler("/down") { [weak server] _ in
            server?.stop()
            return .ok(Data("never sent".utf8))
        }
        let outcome = await client.fetch(server.url("/down"))
        #expect(outcome.errorCode != nil)
        #expect(await waitUntil { server.runningThreadCount == 0 })
        #expect(RawConnection(port: server.port) == nil)
    }

    @Test func startingAndStoppingManyServersLeavesNothingBehind() async throws {
        var ports: [Int] = []
        var traces: [LoopbackServerTrace] = []
        // What the servers' own descriptors (listeners, wake pipes) refer to while they run, as
        // /proc names them ("pipe:[inode]", "socket:[inode]"): unique while open, where the
        // numbers are reused at once by other suites' files.
        var serverFiles = Set<String>()
        // A route and body no other suite's server has: a stopped server's port may be handed to
        // another suite's new server at once (ephemeral ports are reused), and only an answer
        // with this body proves that one of *these* servers still serves.
        let path = "/lifecycle-\(UUID().uuidString)"
        let body = "mine-\(UUID().uuidString)"
        for index in 0..<50 {
            var port = 0
            do {
                let server = try LoopbackServer()
                port = server.port
                ports.append(port)
                server.setRoute(path, .ok(Data(body.utf8)))
                traces.append(server.trace)
                serverFiles.formUnion(server.trace.descriptors.compactMap(Self.openFile(of:)))
                let connection = try #require(RawConnection(port: port))
                connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                var response = Data()
                #expect(connection.read(atLeast: 40, into: &response))
                #expect(server.openConnectionCount == 1)
                if index == 0, Self.openSocketPorts() != nil {
                    // Read again until it shows (bounded): the descriptor list and the TCP table are
                    // two reads of procfs while other suites open and close sockets, and a busy
                    // machine has missed the listener in one such pair.
                    #expect(
                        await waitUntil { Self.openSocketPorts()?.contains(port) == true },
                        "the leak check below sees a running server's sockets")
                }
                if index.isMultiple(of: 2) {
                    server.stop()
                    #expect(server.runningThreadCount == 0)
                    #expect(server.openConnectionCount == 0)
                }
                // The other half are stopped by deinit, at the end of this scope.
                _ = consume server
                #expect(connection.readUntilClosed(), "server \(index) left its connection open")
            }
            #expect(!Self.serves(body, at: path, port: port), "server \(index) still serves after it stopped")
        }
        // No socket of this process is bound to a stopped server's port (listener or accepted
        // connection): exact, whatever other suites open meanwhile.
        if let open = Self.openSocketPorts() {
            // A port in use again belongs to another suite's server unless it serves this body.
            let leaked = open.intersection(ports).filter { Self.serves(body, at: path, port: $0) }
            #expect(leaked.isEmpty, "stopped servers still listening on ports \(leaked.sorted())")
        }
        // And nothing else is left: no thread of any of these servers runs, and none of their
        // listeners or wake pipes is open (the last thread of a released server releases them).
        #expect(await waitUntil { traces.allSatisfy { $0.runningThreadCount == 0 } }, "a stopped server's thread still runs")
        if Self.openFiles() != nil {
            #expect(
                await waitUntil { Self.openFiles().map { $0.isDisjoint(with: serverFiles) } ?? false },
                "a stopped server's listener or wake pipe is still open")
        }
    }

    @Test func concurrentRequestsAllGetTheirOwnBodies() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient(maximumConnectionsPerHost: 6)
        defer { client.close() }
        server.setFallback { request in
            guard let number = Int(request.path.dropFirst("/item/".count)) else { return nil }
            return .ok(testBytes(1_000 + number * 97, seed: number))
        }

        let mismatches = await withTaskGroup(of: Int.self) { group in
            for number in 0..<200 {
                group.addTask {
                    let outcome = await client.fetch(server.url("/item/\(number)"))
                    return outcome.body == testBytes(1_000 + number * 97, seed: number) ? 0 : 1
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(server.totalRequestCount == 200)
        #expect(server.requestCount(for: "/item/199") == 1)
        // URLSession reused its connections. (Not exactly 6 accepted, nor a server-side peak of
        // at most 6: libcurl now and then closes one and opens another at once, and the server
        // may accept the new one before it has seen the old one's FIN.)
        #expect(server.acceptedConnectionCount < 100)
    }

    @Test func openAndPeakConnectionCountsFollowTheClients() async throws {
        let server = try LoopbackServer()
        var connections = (0..<3).compactMap { _ in RawConnection(port: server.port) }
        #expect(await waitUntil { server.openConnectionCount == 3 })
        connections.removeAll()
        #expect(await waitUntil { server.openConnectionCount == 0 })
        #expect(server.peakOpenConnectionCount == 3)
        #expect(server.acceptedConnectionCount == 3)
        server.resetStatistics()
        #expect(server.peakOpenConnectionCount == 0)
        #expect(server.acceptedConnectionCount == 0)
    }

    @Test func keepAliveOffClosesTheConnectionAfterEachResponse() async throws {
        let server = try LoopbackServer(configuration: .init(keepAlive: false))
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/x", .ok(testBytes(100)))
        for _ in 0..<3 {
            let outcome = await client.fetch(server.url("/x"))
            #expect(outcome.body == testBytes(100))
            #expect(outcome.header("Connection")?.lowercased() == "close")
        }
        #expect(server.acceptedConnectionCount == 3)
    }

    @Test func ceilingMeasurementReportsARate() throws {
        let rate = try LoopbackServer.measureCeiling(requests: 2_000, concurrency: 4, bodySize: 1_024)
        print("LoopbackServer ceiling: \(Int(rate)) requests/s (2,000 × 1 KiB over 4 raw keep-alive connections)")
        #expect(rate > 0)
    }

    /// Whether the server on `port` answers `path` with `body` (only the servers of the test that
    /// chose them do).
    private static func serves(_ body: String, at path: String, port: Int) -> Bool {
        guard let connection = RawConnection(port: port, receiveTimeout: 2) else { return false }
        connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        var response = Data()
        _ = connection.read(atLeast: Int.max, into: &response)
        return String(decoding: response, as: UTF8.self).contains(body)
    }

    /// Open file descriptors of this process (Linux), nil elsewhere.
    /// What descriptor `fd` refers to (Linux: its /proc/self/fd link, such as "pipe:[4711]"), nil
    /// elsewhere or when it is not open.
    private static func openFile(of fd: Int32) -> String? {
        #if os(Linux)
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
        #else
        nil  // no /proc: the leak checks that use it are skipped
        #endif
    }

    /// What every open descriptor of this process refers to (Linux), nil elsewhere.
    private static func openFiles() -> Set<String>? {
        #if os(Linux)
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return Set(descriptors.compactMap { Int32($0).flatMap(openFile(of:)) })
        #else
        nil  // no /proc: the leak checks that use it are skipped
        #endif
    }

    /// The local ports of the TCP sockets this process holds open on 127.0.0.1 (Linux: the
    /// socket inodes of /proc/self/fd looked up in /proc/net/tcp), nil elsewhere.
    private static func openSocketPorts() -> Set<Int>? {
        #if !os(Linux)
        return nil  // no /proc: the checks that use it are skipped
        #else
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"),
            // Read to its end: Foundation's String(contentsOfFile:) stops after procfs's first
            // page (about 26 sockets), and the table lists every socket of the machine, so a
            // busy machine's table hid the listener from the check below.
            let tableBytes = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/net/tcp")).readToEnd()
        else { return nil }
        let table = String(decoding: tableBytes, as: UTF8.self)
        var inodes = Set<String>()
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
        }
        var ports = Set<Int>()
        // Fields: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, inodes.contains(String(fields[9])),
                let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
            else { continue }
            ports.insert(port)
        }
        return ports
        #endif
    }

    /// A server refusing connections holds its port: connecting is refused, and no other socket
    /// can bind the port until the server is released (after a plain `stop()` another test's
    /// server could take it and answer in its place).
    @Test func aServerRefusingConnectionsKeepsItsPortUntilReleased() async throws {
        var server: LoopbackServer? = try LoopbackServer()
        let port = try #require(server?.port)
        try server?.refuseConnections()
        #expect(RawConnection(port: port) == nil)
        #expect(Self.bindError(port: port) == EADDRINUSE)
        server = nil
        #expect(await waitUntil { Self.bindError(port: port) == 0 })
    }

    /// Binds a plain socket (`SO_REUSEADDR`, as a server's listener) to 127.0.0.1 at `port`:
    /// 0 when it could, else `errno`.
    private static func bindError(port: Int) -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return bound == 0 ? 0 : errno
    }
}
