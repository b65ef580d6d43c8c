import Foundation

/// A `NotificationCenter` observation that ends when this object goes away: the manager's
/// memory-warning observer is removed with the manager.
final class NotificationObservation: Sendable {
    // `NSObjectProtocol` is not `Sendable`. The token is immutable, never read or called, and only
    // handed back to `NotificationCenter.removeObserver(_:)`, which is thread-safe; no data race
    // can involve it.
    nonisolated(unsafe) private let token: any NSObjectProtocol

    /// Calls `action` on every notification named `name` (on the posting thread) until released.
    init(_ name: Notification.Name, action: @escaping @Sendable () -> Void) {
        token = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in action() }
    }

    deinit {
        NotificationCenter.default.removeObserver(token)
    }
}
