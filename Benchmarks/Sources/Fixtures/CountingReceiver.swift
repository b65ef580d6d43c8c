import Foundation
import ManagedCache
import ManagedCacheLocking

/// A `DataLoadReceiver` that only counts the body bytes, for driving a `DataLoading` directly.
final class CountingReceiver: DataLoadReceiver {
    private let received = Lock<Int>(0)

    /// A receiver that has seen nothing.
    init() {}

    func didReceive(response: DataLoadResponse) throws {}

    func didReceive(_ chunk: Data) throws {
        received.withLock { $0 += chunk.count }
    }

    /// Body bytes received so far.
    var byteCount: Int { received.withLock { $0 } }
}
