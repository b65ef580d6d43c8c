import Foundation
import ManagedCacheLocking

/// Work that runs once on a queue after a delay unless cancelled first: what
/// `loadFromURL(_:afterDelay:)` schedules (UIImageView+Cached's `performSelector:afterDelay:`).
final class ScheduledWork: Sendable {
    private let isCancelled = Lock(false)

    /// Schedules `body` on `queue` after `delay` seconds (0 or less: as soon as the queue allows).
    init(after delay: Double, on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + max(0, delay)) { [self] in
            guard !isCancelled.withLock({ $0 }) else { return }
            body()
        }
    }

    /// Makes sure `body` does not start. (A `body` already running finishes.)
    func cancel() {
        isCancelled.withLock { $0 = true }
    }
}
