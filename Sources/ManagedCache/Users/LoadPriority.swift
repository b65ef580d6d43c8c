import ManagedCacheLocking

/// How urgent a load is: the loading buffer, the prefetch queue and the network order and keep
/// loads by it.
///
/// - Visible content (the cells on screen, the image the user tapped) is `.normal` or higher.
/// - Prefetches run at `.low` unless you pass another priority to
///   ``ObjectManager/prefetch(_:priority:)`` or ``ObjectManager/prefetch(_:decoder:priority:)``.
///
/// What the priority changes:
/// - **Loading buffer.** When a new load pushes the buffer past its capacity, the load pushed out
///   is the oldest of those with the *lowest* priority, the new one included: a `.veryLow` load
///   never pushes out a `.high` one, and among equal priorities the buffer stays HJCache's FIFO.
/// - **Prefetch queue.** Waiting prefetches start highest priority first, in order within one priority.
/// - **Network.** The fetch's `URLSessionTask.priority` follows it, and so does the order in which
///   loads held back by the per-host connection limit go on the wire.
///
/// A running load's priority is the highest of everything that wants it, and follows them: a user
/// joining with a higher priority raises it (a prefetched row scrolled into view), prefetching a
/// request again with another priority changes the prefetch's, and a user re-managed with a lower
/// priority or gone lowers it.
public enum LoadPriority: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Work nobody will miss if it never happens (speculative prefetch far ahead).
    case veryLow = 0
    /// Work ahead of need: the default for prefetching.
    case low = 1
    /// What a user waits for: the default of every request.
    case normal = 2
    /// What matters most on screen now (the hero image, the visible rows of a fast list).
    case high = 3
    /// What blocks the user (the photo they opened full screen).
    case veryHigh = 4

    /// Orders priorities from ``veryLow`` to ``veryHigh``.
    ///
    /// - Parameters:
    ///   - lhs: A priority.
    ///   - rhs: Another priority.
    /// - Returns: `true` when `lhs` is less urgent than `rhs`.
    public static func < (lhs: LoadPriority, rhs: LoadPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The matching `URLSessionTask.priority` (0…1; `URLSessionTask.defaultPriority` is 0.5,
    /// `lowPriority` 0.25, `highPriority` 0.75).
    public var taskPriority: Float {
        switch self {
        case .veryLow: return 0.1
        case .low: return 0.25
        case .normal: return 0.5
        case .high: return 0.75
        case .veryHigh: return 1
        }
    }

    /// The case's name, such as `veryLow`.
    public var description: String {
        switch self {
        case .veryLow: return "veryLow"
        case .low: return "low"
        case .normal: return "normal"
        case .high: return "high"
        case .veryHigh: return "veryHigh"
        }
    }
}

/// The priority of one running fetch, shared between the manager (which raises or lowers it) and
/// the data loader (which applies it to its transfer and orders waiting transfers by it, reading
/// it when it does).
///
/// A class with a lock because both sides run on different threads and the loader must see a
/// change made after its load started.
final class LoadPriorityCell: Sendable {
    private let state: Lock<LoadPriority>

    init(_ value: LoadPriority) {
        state = Lock(value)
    }

    /// The current priority.
    var value: LoadPriority { state.withLock { $0 } }

    /// Changes the priority.
    func set(_ newValue: LoadPriority) {
        state.withLock { $0 = newValue }
    }
}
