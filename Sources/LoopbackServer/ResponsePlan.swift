import Foundation

/// The bytes the server sends for one request: the serialised head, the body bytes (already cut
/// to a range, empty for `HEAD` and `304`) and how to deliver them.
///
/// Building the plan is where HTTP semantics live: conditional requests (`If-None-Match`,
/// `If-Modified-Since` → `304`), byte ranges (`Range`, `If-Range` → `206` / `416`), which
/// statuses carry a body, and when a `Content-Length` or `Connection: close` is written.
struct ResponsePlan {
    /// Status line and header fields, ending with the blank line.
    var head: [UInt8]
    /// The body bytes to write after the head.
    var body: Data
    /// How to deliver the body.
    var behavior: LoopbackResponse.Behavior
    /// Whether the connection closes after this response.
    var closesConnection: Bool

    /// Plans the answer to `request` from the route's `response`. `closeAfter` says the
    /// connection closes after it anyway (keep-alive off, or the client asked).
    init(request: LoopbackRequest, response: LoopbackResponse, closeAfter: Bool) {
        var status = response.status
        var body = response.body
        var contentRange: String?
        if status == 200 {
            if Self.isNotModified(request, response) {
                status = 304
                body = Data()
            } else if response.supportsRanges, let range = request.header("Range"), Self.ifRangeAllows(request, response) {
                switch ByteRange(header: range, length: body.count) {
                case .satisfiable(let lower, let upper):
                    status = 206
                    contentRange = "bytes \(lower)-\(upper)/\(body.count)"
                    body = body[(body.startIndex + lower)...(body.startIndex + upper)]
                case .unsatisfiable:
                    status = 416
                    contentRange = "bytes */\(body.count)"
                    body = Data()
                case .ignored:
                    break
                }
            }
        }

        let statusAllowsBody = !((100..<200).contains(status) || status == 204 || status == 304)
        var omitsLength = false
        var closes = closeAfter
        if case .truncate(_, sendContentLength: false) = response.behavior {
            omitsLength = true
            closes = true
        }

        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        if statusAllowsBody {
            if !omitsLength { head += "Content-Length: \(body.count)\r\n" }
            if let contentType = response.contentType { head += "Content-Type: \(contentType)\r\n" }
        }
        if let etag = response.etag { head += "ETag: \(etag)\r\n" }
        if let lastModified = response.lastModified { head += "Last-Modified: \(lastModified)\r\n" }
        if let cacheControl = response.cacheControl { head += "Cache-Control: \(cacheControl)\r\n" }
        if let expires = response.expires { head += "Expires: \(expires)\r\n" }
        if response.supportsRanges && (status == 200 || status == 206 || status == 416) {
            head += "Accept-Ranges: bytes\r\n"
        }
        if let contentRange { head += "Content-Range: \(contentRange)\r\n" }
        for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
        if closes { head += "Connection: close\r\n" }
        head += "\r\n"

        self.head = Array(head.utf8)
        self.body = statusAllowsBody && request.method != "HEAD" ? body : Data()
        self.behavior = response.behavior
        self.closesConnection = closes
    }

    /// `If-None-Match` (a list, `*`, weak comparison) takes precedence over `If-Modified-Since`
    /// (an exact match with `Last-Modified`, which is what clients send back).
    private static func isNotModified(_ request: LoopbackRequest, _ response: LoopbackResponse) -> Bool {
        if let candidates = request.header("If-None-Match") {
            return candidates.split(separator: ",").contains { candidate in
                let tag = candidate.trimmingCharacters(in: .whitespaces)
                if tag == "*" { return true }
                guard let etag = response.etag else { return false }
                return weakComparable(tag) == weakComparable(etag)
            }
        }
        if let since = request.header("If-Modified-Since"), let lastModified = response.lastModified {
            return since.trimmingCharacters(in: .whitespaces) == lastModified
        }
        return false
    }

    /// Without `If-Range` a range applies; with it, only when it names the current entity:
    /// a strong ETag equal to ours, or a date equal to our `Last-Modified`.
    private static func ifRangeAllows(_ request: LoopbackRequest, _ response: LoopbackResponse) -> Bool {
        guard let value = request.header("If-Range")?.trimmingCharacters(in: .whitespaces) else { return true }
        if value.hasPrefix("W/") { return false }
        if value.hasPrefix("\"") {
            guard let etag = response.etag, !etag.hasPrefix("W/") else { return false }
            return value == etag
        }
        return value == response.lastModified
    }

    private static func weakComparable(_ tag: some StringProtocol) -> Substring {
        let tag = Substring(tag)
        return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 410: "Gone"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}
