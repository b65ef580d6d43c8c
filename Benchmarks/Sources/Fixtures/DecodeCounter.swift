import Synchronization

/// Counts decodes from any thread.
final class DecodeCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// A counter at zero.
    init() {}

    /// Adds one decode.
    func increment() {
        value.add(1, ordering: .relaxed)
    }

    /// The decodes so far.
    var count: Int { value.load(ordering: .relaxed) }
}
