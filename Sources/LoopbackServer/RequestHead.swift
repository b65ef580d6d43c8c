/// A parsed HTTP/1.x request head: the request plus what the connection needs to know about
/// framing (whether to close afterwards, how many body bytes to discard).
struct RequestHead {
    /// The request as handlers and statistics see it.
    var request: LoopbackRequest
    /// `Connection: close`, or HTTP/1.0 without `Connection: keep-alive`.
    var wantsClose: Bool
    /// `Content-Length` of the request body (read and discarded), 0 when absent.
    var bodyLength: Int
    /// A body whose end cannot be found without decoding it (`Transfer-Encoding`): the server
    /// answers and then closes the connection instead.
    var hasUnframedBody: Bool

    /// Parses the bytes before the blank line; `nil` when the request line is malformed.
    init?(bytes: some Collection<UInt8>) {
        // Split bytes, not characters: Swift treats "\r\n" as a single Character.
        var lines = Array(bytes).split(separator: UInt8(ascii: "\n")).lazy.map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }.makeIterator()
        guard let requestLine = lines.next() else { return nil }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return nil }
        let method = String(parts[0])
        var target = parts[1]
        // Absolute form (`GET http://host/path HTTP/1.1`, as sent to proxies): keep the path.
        if target.hasPrefix("http://") || target.hasPrefix("https://") {
            let afterScheme = target[target.index(target.firstIndex(of: ":")!, offsetBy: 3)...]
            target = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        let path: Substring
        let query: Substring
        if let mark = target.firstIndex(of: "?") {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            path = target
            query = ""
        }

        var headers: [(name: String, value: String)] = []
        var wantsClose = parts[2] == "HTTP/1.0"
        var bodyLength = 0
        var hasUnframedBody = false
        while let line = lines.next() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...].trimmingWhitespace())
            headers.append((name, value))
            if name.caseInsensitiveEquals("Connection") {
                let tokens = value.lowercased()
                if tokens.contains("close") { wantsClose = true }
                if tokens.contains("keep-alive") { wantsClose = false }
            } else if name.caseInsensitiveEquals("Content-Length") {
                bodyLength = max(0, Int(value) ?? 0)
            } else if name.caseInsensitiveEquals("Transfer-Encoding") {
                hasUnframedBody = true
            }
        }
        self.request = LoopbackRequest(method: method, path: String(path), query: String(query), headers: headers)
        self.wantsClose = wantsClose
        self.bodyLength = bodyLength
        self.hasUnframedBody = hasUnframedBody
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var trimmed = self
        while let first = trimmed.first, first == " " || first == "\t" { trimmed.removeFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
        return trimmed
    }
}
