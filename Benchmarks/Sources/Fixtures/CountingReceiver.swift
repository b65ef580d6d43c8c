import Foundation
import ManagedCache
import Synchronization

/// A `DataLoadReceiver` that only counts the body bytes, for driving a `DataLoading` directly.
final class CountingReceiver: DataLoadReceiver {
    private let received = Atomic<Int>(0)

    /// A receiver that has seen nothing.
    init() {}

    func didReceive(response: DataLoadResponse) throws {}

    func didReceive(_ chunk: Data) throws {
        received.add(chunk.count, ordering: .relaxed)
    }

    /// Body bytes received so far.
    var byteCount: Int { received.load(ordering: .relaxed) }
}
