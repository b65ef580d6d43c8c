import ManagedCacheLocking

/// Hands out the indices `0..<count` one at a time to concurrent workers.
final class WorkQueue: Sendable {
    private let next = Lock<Int>(0)
    /// How many indices there are.
    let count: Int

    /// A queue of `0..<count`.
    init(count: Int) {
        self.count = count
    }

    /// The next index, or `nil` when all have been handed out.
    func take() -> Int? {
        let index = next.withLock { value in
            defer { value &+= 1 }
            return value
        }
        return index < count ? index : nil
    }
}
