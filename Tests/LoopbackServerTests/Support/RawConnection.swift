import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP connection to the server, for what URLSession cannot show: whether the server
/// closed a connection, and the raw bytes it sent.
final class RawConnection {
    /// What a read saw.
    enum ReadResult: Equatable {
        case bytes(Int)
        /// FIN (0 bytes) or RST (ECONNRESET): the server closed the connection.
        case closed
        /// Nothing arrived within the receive timeout.
        case timedOut
    }

    private let fd: Int32

    /// Connects to 127.0.0.1 at `port`, or returns nil when the connection is refused.
    init?(port: Int, receiveTimeout: Double = 10) {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        let whole = Int(receiveTimeout)
        var timeout = timeval(tv_sec: .init(whole), tv_usec: .init((receiveTimeout - Double(whole)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Sends `text` (a request head, CRLFs included).
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        #if canImport(Glibc)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #else
        _ = bytes.withUnsafeBytes { Darwin.send(fd, $0.baseAddress, $0.count, 0) }
        #endif
    }

    /// Reads once.
    func read(into data: inout Data) -> ReadResult {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &chunk, chunk.count, 0)
        if count > 0 {
            data.append(contentsOf: chunk[0..<count])
            return .bytes(count)
        }
        if count == 0 || errno == ECONNRESET { return .closed }
        return .timedOut
    }

    /// Reads until `data` holds at least `count` bytes; false if the connection ended first.
    func read(atLeast count: Int, into data: inout Data) -> Bool {
        while data.count < count {
            guard case .bytes = read(into: &data) else { return false }
        }
        return true
    }

    /// Reads and discards until the server closes the connection (true) or a read times out.
    func readUntilClosed() -> Bool {
        var sink = Data()
        while true {
            switch read(into: &sink) {
            case .bytes: sink.removeAll(keepingCapacity: true)
            case .closed: return true
            case .timedOut: return false
            }
        }
    }
}
