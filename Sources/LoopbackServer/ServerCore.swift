import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything a running server shares between its accept thread and connection threads.
///
/// ``LoopbackServer`` owns one and forwards to it; the threads hold the core, never the public
/// object, so dropping the last reference to a `LoopbackServer` runs its `deinit`, which stops
/// the core.
final class ServerCore: Sendable {
    /// Latency and bandwidth, changeable while the server runs.
    struct Shaping {
        /// Seconds to wait before each response.
        var latency: Double
        /// Body bytes per second per connection; `nil` for unlimited.
        var bytesPerSecond: Int?
    }

    /// Seconds `stop()` waits for the server's threads to return.
    private static let stopTimeout = 5.0

    let routes = RouteTable()
    let statistics: RequestStatistics
    let registry = ConnectionRegistry()
    let wake: WakeSignal
    let keepAlive: Bool
    let port: Int

    private let shapingState: Lock<Shaping>
    private let listener: Int32
    /// The socket holding the port after `refuseConnections()` (see `Socket.reservePort`).
    private let reservation = Lock<Int32?>(nil)
    /// The descriptors the server opened at start: its listener and its wake pipe.
    var ownDescriptors: [Int32] { [listener] + wake.descriptors }

    /// Binds the listener on 127.0.0.1 at an ephemeral port and starts accepting.
    init(configuration: LoopbackServer.Configuration) throws(LoopbackServerError) {
        wake = try WakeSignal()
        (listener, port) = try Socket.makeLoopbackListener(backlog: 256)
        keepAlive = configuration.keepAlive
        statistics = RequestStatistics(recordLimit: configuration.recordedRequestsPerPath)
        shapingState = Lock(
            Shaping(
                latency: max(0, configuration.latency),
                bytesPerSecond: configuration.bytesPerSecond.map { max(1, $0) }
            ))
        registry.startThread(name: "LoopbackServer \(port) accept") { [self] in acceptLoop() }
    }

    /// The current latency and bandwidth settings.
    var shaping: Shaping {
        get { shapingState.withLock { $0 } }
        set { shapingState.withLock { $0 = newValue } }
    }

    /// `stop()`, keeping the port: a socket that does not listen holds it first, so connections
    /// to it are refused and no other server can take it, until this core is released.
    func refuseConnections() throws(LoopbackServerError) {
        let held = try Socket.reservePort(port)
        let previous = reservation.withLock { current -> Int32? in
            defer { current = held }
            return current
        }
        if let previous { Socket.close(previous) }
        stop()
    }

    deinit {
        if let held = reservation.withLock({ $0 }) { Socket.close(held) }
    }

    /// Closes the listener and every connection, and waits (bounded) for all threads to end;
    /// called from one of those threads (a handler), it does not wait, as that thread is one
    /// of the threads to end.
    func stop() {
        wake.raise()
        registry.shutdownAll()
        guard !registry.isCallerAServerThread else { return }
        _ = registry.waitForThreads(timeout: Self.stopTimeout)
    }

    private func acceptLoop() {
        defer { Socket.close(listener) }
        while true {
            switch wake.wait(for: listener, timeout: nil) {
            case .raised:
                return
            case .timedOut:
                continue
            case .readable:
                while let fd = Socket.accept(listener) {
                    guard registry.register(fd) else {
                        Socket.close(fd)
                        return
                    }
                    statistics.addAcceptedConnection()
                    registry.startThread(name: "LoopbackServer \(port) connection") { [self] in
                        var connection = Connection(fd: fd, server: self)
                        connection.run()
                    }
                }
                if errno != EAGAIN && errno != EWOULDBLOCK {
                    // Out of descriptors or similar: back off instead of spinning on poll.
                    guard wake.sleep(seconds: 0.01) else { return }
                }
            }
        }
    }
}
