/// Which way a ratio must go to meet its target.
enum TargetDirection: Sendable {
    /// The ratio must not exceed the limit (time, bytes).
    case atMost
    /// The ratio must reach the limit (throughput).
    case atLeast
}
