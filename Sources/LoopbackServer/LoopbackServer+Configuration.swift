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

        /// Creates a configuration; the defaults are an unshaped keep-alive server.
        public init(latency: Double = 0, bytesPerSecond: Int? = nil, keepAlive: Bool = true) {
            self.latency = latency
            self.bytesPerSecond = bytesPerSecond
            self.keepAlive = keepAlive
        }
    }
}
