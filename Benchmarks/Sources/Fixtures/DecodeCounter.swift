import ManagedCacheLocking

/// Counts decodes from any thread.
final class DecodeCounter: Sendable {
    private let value = Lock<Int>(0)

    /// A counter at zero.
    init() {}

    /// Adds one decode.
    func increment() {
        value.withLock { $0 += 1 }
    }

    /// The decodes so far.
    var count: Int { value.withLock { $0 } }
}
