/// A minimal keep-alive HTTP/1.1 client over one raw socket, used to measure the server's own
/// ceiling without URLSession's overhead. It understands exactly what the server sends for a
/// plain `200`: a status line, a `Content-Length`, and that many body bytes.
struct CeilingClient: ~Copyable {
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var start = 0
    private var end = 0

    /// Connects to 127.0.0.1 at `port`; reads give up after `timeout` seconds of silence.
    init(port: Int, timeout: Double) throws(LoopbackServerError) {
        fd = try Socket.connectLoopback(port: port)
        Socket.setReceiveTimeout(fd, seconds: timeout)
    }

    deinit {
        Socket.close(fd)
    }

    /// Sends `GET path` and reads the whole response; returns the body length.
    mutating func get(_ path: String) throws(LoopbackServerError) -> Int {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard Socket.sendAll(fd, request) else { throw .system(call: "send", errno: 0) }
        let head = try readHead()
        guard head.hasPrefix("HTTP/1.1 200") else { throw .unexpectedResponse(String(head.prefix(80))) }
        guard let length = Self.contentLength(in: head) else { throw .unexpectedResponse("no Content-Length") }
        try skip(length)
        return length
    }

    private mutating func readHead() throws(LoopbackServerError) -> String {
        var scanFrom = start
        while true {
            var index = scanFrom
            while index + 3 < end {
                if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                    let head = String(decoding: buffer[start..<index], as: UTF8.self)
                    start = index + 4
                    return head
                }
                index += 1
            }
            scanFrom = max(start, end - 3)
            if end == buffer.count {
                guard start > 0 else { throw .unexpectedResponse("head too large") }
                buffer.replaceSubrange(0..<(end - start), with: buffer[start..<end])
                scanFrom -= start
                (start, end) = (0, end - start)
            }
            try fill()
        }
    }

    private mutating func skip(_ count: Int) throws(LoopbackServerError) {
        var remaining = count
        while true {
            let buffered = min(remaining, end - start)
            start += buffered
            remaining -= buffered
            if start == end { (start, end) = (0, 0) }
            guard remaining > 0 else { return }
            try fill()
        }
    }

    private mutating func fill() throws(LoopbackServerError) {
        let (fd, freeStart) = (self.fd, end)
        let received = buffer.withUnsafeMutableBytes { bytes in
            Socket.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[freeStart...]))
        }
        guard received > 0 else { throw .unexpectedResponse("connection closed or timed out") }
        end += received
    }

    private static func contentLength(in head: String) -> Int? {
        for line in head.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":"),
                line[..<colon].lowercased() == "content-length"
            else { continue }
            return Int(line[line.index(after: colon)...].drop { $0 == " " })
        }
        return nil
    }
}
