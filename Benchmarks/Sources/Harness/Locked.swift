import ManagedCacheLocking

/// A value behind a `Mutex`, as a class so closures and threads can share it.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Lock<Value>

    /// Creates the box holding `value`.
    init(_ value: Value) {
        storage = Lock(value)
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock { try body(&$0) }
    }

    /// A copy of the value.
    var value: Value { storage.withLock { $0 } }
}
