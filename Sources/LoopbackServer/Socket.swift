#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX socket calls the server and the ceiling client use.
///
/// Everything here works on plain file descriptors and hides the differences between Glibc and
/// Darwin (constant types, `sin_len`, how SIGPIPE is suppressed). Calls are retried on `EINTR`.
enum Socket {
    /// Flags for `send`: on Linux `MSG_NOSIGNAL` keeps a write to a closed peer from raising
    /// SIGPIPE; on Darwin the socket option `SO_NOSIGPIPE` (set in `configure`) does that.
    #if canImport(Glibc)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    private static let sendFlags: Int32 = 0
    private static let streamType = SOCK_STREAM
    #endif

    /// The IPv4 loopback address 127.0.0.1 in network byte order.
    private static let loopbackAddress = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)

    /// Creates a non-blocking TCP socket listening on 127.0.0.1 at an ephemeral port.
    static func makeLoopbackListener(backlog: Int32) throws(LoopbackServerError) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        do throws(LoopbackServerError) {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, call: "setsockopt(SO_REUSEADDR)")
            // So that `reservePort` can hold the port while this listener still has it.
            try setOption(fd, SOL_SOCKET, SO_REUSEPORT, 1, call: "setsockopt(SO_REUSEPORT)")
            var address = makeAddress(port: 0)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw .system(call: "bind", errno: errno) }
            guard listen(fd, backlog) == 0 else { throw .system(call: "listen", errno: errno) }
            let port = try boundPort(fd)
            try setNonBlocking(fd, true)
            return (fd, port)
        } catch {
            close(fd)
            throw error
        }
    }

    /// A socket bound to 127.0.0.1 at `port` that does not listen: connections to the port are
    /// refused while it is open, and no other socket can bind the port (unless it asks for
    /// `SO_REUSEPORT` as the same user, which no server's ephemeral bind does). Bound while the
    /// listener still holds the port, so the port is never free in between.
    static func reservePort(_ port: Int) throws(LoopbackServerError) -> Int32 {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        do throws(LoopbackServerError) {
            // `SO_REUSEPORT` alone: bound beside the listener, which has it too; without
            // `SO_REUSEADDR`, a bind by any other socket conflicts with this one.
            try setOption(fd, SOL_SOCKET, SO_REUSEPORT, 1, call: "setsockopt(SO_REUSEPORT)")
            var address = makeAddress(port: port)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw .system(call: "bind", errno: errno) }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Opens a blocking TCP connection to 127.0.0.1 at `port`.
    static func connectLoopback(port: Int) throws(LoopbackServerError) -> Int32 {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        var address = makeAddress(port: port)
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            close(fd)
            throw .system(call: "connect", errno: code)
        }
        configure(fd)
        return fd
    }

    /// Accepts one pending connection; `nil` when none is pending or the listener failed.
    static func accept(_ listener: Int32) -> Int32? {
        while true {
            #if canImport(Glibc)
            let fd = Glibc.accept(listener, nil, nil)
            #else
            let fd = Darwin.accept(listener, nil, nil)
            #endif
            if fd >= 0 {
                // Darwin hands out accepted sockets with the listener's O_NONBLOCK; connections
                // use blocking I/O, woken by `shutdown` when the server stops.
                try? setNonBlocking(fd, false)
                configure(fd)
                return fd
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            return nil
        }
    }

    /// Sets TCP_NODELAY (a keep-alive client otherwise waits ~40 ms per request on delayed ACKs)
    /// and, on Darwin, SO_NOSIGPIPE.
    static func configure(_ fd: Int32) {
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, call: "setsockopt(TCP_NODELAY)")
        #if canImport(Darwin)
        try? setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1, call: "setsockopt(SO_NOSIGPIPE)")
        #endif
    }

    /// Writes every byte of `buffer`; returns false when the connection failed.
    static func sendAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        guard var pointer = buffer.baseAddress else { return true }
        var remaining = buffer.count
        while remaining > 0 {
            let written = send(fd, pointer, remaining, sendFlags)
            if written > 0 {
                pointer += written
                remaining -= written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Writes every byte of `bytes`; returns false when the connection failed.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { sendAll(fd, $0) }
    }

    /// Reads what is available (blocking until something is); 0 at end of stream, -1 on error.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Shuts down both directions: wakes any thread blocked on the socket without freeing the
    /// descriptor, so the owner can still close it itself.
    static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Sends FIN: the peer sees a clean end of stream.
    static func shutdownWrite(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the descriptor.
    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    /// Closes with an RST instead of a FIN (SO_LINGER on with a zero timeout).
    static func abort(_ fd: Int32) {
        var value = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }

    /// Sets a receive timeout so a blocking `receive` gives up after `seconds`.
    static func setReceiveTimeout(_ fd: Int32, seconds: Double) {
        let whole = Int(seconds)
        var value = timeval(tv_sec: .init(whole), tv_usec: .init((seconds - Double(whole)) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Switches O_NONBLOCK on or off.
    static func setNonBlocking(_ fd: Int32, _ enabled: Bool) throws(LoopbackServerError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { throw .system(call: "fcntl(F_GETFL)", errno: errno) }
        let wanted = enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        guard wanted == flags || fcntl(fd, F_SETFL, wanted) == 0 else {
            throw .system(call: "fcntl(F_SETFL)", errno: errno)
        }
    }

    private static func setOption(
        _ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, call: String
    ) throws(LoopbackServerError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .system(call: call, errno: errno)
        }
    }

    private static func makeAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = loopbackAddress
        return address
    }

    private static func boundPort(_ fd: Int32) throws(LoopbackServerError) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw .system(call: "getsockname", errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
