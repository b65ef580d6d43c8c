import Foundation

/// One accepted connection, served on its own thread: reads requests, answers them, and ends
/// the connection the way the last response asks (keep open, FIN, RST, or stall).
struct Connection {
    /// How the connection ends once the request loop is done with it.
    enum Ending {
        /// Serve the next request on the same connection.
        case keepOpen
        /// Send FIN, let the client close, then close.
        case close
        /// Close with an RST.
        case abort
        /// Send nothing more; close when the client closes or the server stops.
        case stall
        /// The peer went away or the server is stopping: just close.
        case drop
    }

    /// Largest request head accepted; longer ones get `431` and a close.
    private static let maximumHeadSize = 64 * 1024
    /// How long a graceful close waits for the client's FIN before closing anyway.
    private static let lingerSeconds = 2.0
    /// Bodies up to this size are written together with the head in a single `send`.
    private static let coalescingLimit = 256 * 1024

    private let fd: Int32
    private let server: ServerCore
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// Unread bytes are `buffer[start..<end]`.
    private var start = 0
    private var end = 0

    init(fd: Int32, server: ServerCore) {
        self.fd = fd
        self.server = server
    }

    /// Serves requests until the connection ends, then closes the socket.
    mutating func run() {
        var ending = Ending.drop
        while !server.wake.isRaised {
            ending = serveOneRequest()
            if case .keepOpen = ending { continue }
            break
        }
        finish(ending)
    }

    private mutating func serveOneRequest() -> Ending {
        let head: RequestHead
        switch readHead() {
        case .head(let parsed): head = parsed
        case .closed: return .drop
        case .malformed: return reject(.status(400, body: Data("malformed request\n".utf8)))
        case .tooLarge: return reject(.status(431))
        }
        guard discard(head.bodyLength) else { return .drop }
        server.statistics.record(head.request)
        let response = server.routes.response(for: head.request)
        let closeAfter = !server.keepAlive || head.wantsClose || head.hasUnframedBody
        return deliver(ResponsePlan(request: head.request, response: response, closeAfter: closeAfter))
    }

    private func reject(_ response: LoopbackResponse) -> Ending {
        let plan = ResponsePlan(request: LoopbackRequest(method: "GET", path: "/"), response: response, closeAfter: true)
        return deliver(plan)
    }

    // MARK: Writing

    private func deliver(_ plan: ResponsePlan) -> Ending {
        let shaping = server.shaping
        var delay = shaping.latency
        if case .delayed(let seconds) = plan.behavior { delay += seconds }
        if delay > 0 && !server.wake.sleep(seconds: delay) { return .drop }

        let body = plan.body
        let afterBody: Ending = plan.closesConnection ? .close : .keepOpen
        switch plan.behavior {
        case .normal, .delayed:
            return write(plan.head, body, bytesPerSecond: shaping.bytesPerSecond) ? afterBody : .drop
        case .stall(let count):
            return write(plan.head, Self.prefix(body, count), bytesPerSecond: shaping.bytesPerSecond) ? .stall : .drop
        case .truncate(let count, _):
            return write(plan.head, Self.prefix(body, count), bytesPerSecond: shaping.bytesPerSecond) ? .close : .drop
        case .reset(let count):
            return write(plan.head, Self.prefix(body, count), bytesPerSecond: shaping.bytesPerSecond) ? .abort : .drop
        case .drip(let chunkSize, let interval):
            return drip(plan.head, body, chunkSize: max(1, chunkSize), interval: interval) ? afterBody : .drop
        case .gated(let gate):
            return sendGated(plan.head, body, gate: gate) ? afterBody : .drop
        }
    }

    /// Writes the head, then the body piece by piece as `gate` releases them.
    private func sendGated(_ head: [UInt8], _ body: Data, gate: BodyGate) -> Bool {
        server.statistics.addHeadBytes(head.count)
        guard Socket.sendAll(fd, head) else { return false }
        for (index, range) in gate.pieces(ofLength: body.count).enumerated() {
            while !gate.maySend(piece: index) {
                guard server.wake.sleep(seconds: 0.002) else { return false }
            }
            let piece = body[(body.startIndex + range.lowerBound)..<(body.startIndex + range.upperBound)]
            guard piece.withUnsafeBytes({ Socket.sendAll(fd, $0) }) else { return false }
            server.statistics.addBodyBytes(piece.count)
            gate.didSend()
        }
        return true
    }

    private static func prefix(_ body: Data, _ count: Int) -> Data {
        body.prefix(max(0, count))
    }

    /// Writes the head and the body, paced when `bytesPerSecond` is set.
    private func write(_ head: [UInt8], _ body: Data, bytesPerSecond: Int?) -> Bool {
        server.statistics.addHeadBytes(head.count)
        if let rate = bytesPerSecond, rate > 0 {
            guard Socket.sendAll(fd, head) else { return false }
            // Chunks of ~20 ms worth of bytes, each sent when the schedule says it is due.
            return sendPaced(body, chunkSize: max(1, min(rate / 50, 64 * 1024))) { sent in
                Double(sent) / Double(rate)
            }
        }
        if body.count <= Self.coalescingLimit {
            var bytes = head
            bytes.append(contentsOf: body)
            guard Socket.sendAll(fd, bytes) else { return false }
        } else {
            guard Socket.sendAll(fd, head), body.withUnsafeBytes({ Socket.sendAll(fd, $0) }) else { return false }
        }
        server.statistics.addBodyBytes(body.count)
        return true
    }

    /// Writes the head, then the body `chunkSize` bytes at a time, `interval` seconds apart.
    private func drip(_ head: [UInt8], _ body: Data, chunkSize: Int, interval: Double) -> Bool {
        server.statistics.addHeadBytes(head.count)
        guard Socket.sendAll(fd, head) else { return false }
        return sendPaced(body, chunkSize: chunkSize) { sent in Double(sent / chunkSize) * interval }
    }

    /// Sends `body` in chunks; chunk starting at byte `sent` goes out `due(sent)` seconds after
    /// the first one. Returns false when the peer failed or the server is stopping.
    private func sendPaced(_ body: Data, chunkSize: Int, due: (Int) -> Double) -> Bool {
        let startTime = DispatchTime.now().uptimeNanoseconds
        var sent = 0
        while sent < body.count {
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - startTime) / 1e9
            let wait = due(sent) - elapsed
            if wait > 0 && !server.wake.sleep(seconds: wait) { return false }
            let chunk = body[(body.startIndex + sent)..<(body.startIndex + min(body.count, sent + chunkSize))]
            guard chunk.withUnsafeBytes({ Socket.sendAll(fd, $0) }) else { return false }
            sent += chunk.count
            server.statistics.addBodyBytes(chunk.count)
        }
        return true
    }

    // MARK: Ending

    private func finish(_ ending: Ending) {
        switch ending {
        case .keepOpen, .drop:
            break
        case .close:
            Socket.shutdownWrite(fd)
            waitForPeerToClose(timeout: Self.lingerSeconds)
        case .stall:
            waitForPeerToClose(timeout: nil)
        case .abort:
            server.registry.unregister(fd)
            Socket.abort(fd)
            return
        }
        server.registry.unregister(fd)
        Socket.close(fd)
    }

    /// Reads and discards until the client closes, the server stops or `timeout` passes.
    private func waitForPeerToClose(timeout: Double?) {
        let deadline = timeout.map { DispatchTime.now().uptimeNanoseconds + UInt64($0 * 1e9) }
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let remaining = deadline.map { Double(Int64($0) - Int64(DispatchTime.now().uptimeNanoseconds)) / 1e9 }
            if let remaining, remaining <= 0 { return }
            guard server.wake.wait(for: fd, timeout: remaining) == .readable else { return }
            guard scratch.withUnsafeMutableBytes({ Socket.receive(fd, into: $0) }) > 0 else { return }
        }
    }
}

extension Connection {
    /// What reading a request head produced.
    fileprivate enum ReadResult {
        case head(RequestHead)
        case closed
        case malformed
        case tooLarge
    }

    /// Reads until a blank line ends the head (keeping any bytes after it for the next read).
    fileprivate mutating func readHead() -> ReadResult {
        var scanFrom = start
        while true {
            if let headEnd = Self.findBlankLine(in: buffer, from: scanFrom, to: end) {
                let parsed = RequestHead(bytes: buffer[start..<headEnd.contentEnd])
                start = headEnd.next
                if start == end { (start, end) = (0, 0) }
                return parsed.map(ReadResult.head) ?? .malformed
            }
            scanFrom = max(start, end - 3)
            if end == buffer.count {
                if start > 0 {
                    buffer.replaceSubrange(0..<(end - start), with: buffer[start..<end])
                    scanFrom -= start
                    (start, end) = (0, end - start)
                } else if buffer.count < Self.maximumHeadSize {
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))
                } else {
                    return .tooLarge
                }
            }
            let (fd, freeStart) = (self.fd, end)
            let received = buffer.withUnsafeMutableBytes { bytes in
                Socket.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[freeStart...]))
            }
            guard received > 0 else { return .closed }
            end += received
        }
    }

    /// Consumes `count` request-body bytes, from the buffer first, then from the socket.
    fileprivate mutating func discard(_ count: Int) -> Bool {
        let buffered = min(count, end - start)
        start += buffered
        var remaining = count - buffered
        if start == end { (start, end) = (0, 0) }
        let fd = self.fd
        while remaining > 0 {
            let received = buffer.withUnsafeMutableBytes { bytes in
                Socket.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<min(bytes.count, remaining)]))
            }
            guard received > 0 else { return false }
            remaining -= received
        }
        return true
    }

    /// Finds `\r\n\r\n` (or a bare `\n\n`) in `bytes[from..<to]`.
    private static func findBlankLine(in bytes: [UInt8], from: Int, to: Int) -> (contentEnd: Int, next: Int)? {
        let newline = UInt8(ascii: "\n")
        let carriageReturn = UInt8(ascii: "\r")
        var index = from
        while index < to {
            if bytes[index] == newline {
                if index + 2 < to, bytes[index + 1] == carriageReturn, bytes[index + 2] == newline {
                    return (index, index + 3)
                }
                if index + 1 < to, bytes[index + 1] == newline {
                    return (index, index + 2)
                }
            }
            index += 1
        }
        return nil
    }
}
