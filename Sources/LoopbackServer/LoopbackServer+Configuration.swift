extension LoopbackServer {
    /// How a server shapes its traffic; latency and bandwidth can also change while it runs.
    public struct Configuration: Sendable {
        /// Seconds to wait before each response (0 for none).
        public var latency: Double
        /// Body bytes per second per connection (`nil` for unlimited).
        public var bytesPerSecond: Int?
        /// Whether connections stay open between requests (HTTP/1.1 keep-alive). When false,
        /// every response says `Connection: close` and the connection closes after it.
        public var keepAlive: Bool
        /// How many of each path's latest requests `recordedRequests(for:)` keeps (counts are
        /// always exact). 1,000 by default; a long-running program that never inspects requests
        /// sets a small number, so the log does not grow with every request (a soak's memory
        /// check would measure the log, not the client).
        public var recordedRequestsPerPath: Int

        /// Creates a configuration; the defaults are an unshaped keep-alive server that keeps
        /// each path's last 1,000 requests.
        public init(latency: Double = 0, bytesPerSecond: Int? = nil, keepAlive: Bool = true, recordedRequestsPerPath: Int = 1_000) {
            self.latency = latency
            self.bytesPerSecond = bytesPerSecond
            self.keepAlive = keepAlive
            self.recordedRequestsPerPath = max(0, recordedRequestsPerPath)
        }
    }
}
