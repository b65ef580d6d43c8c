/// One load in the loading buffer, as a ``LoadingBufferPushOutPolicy`` sees it.
public struct BufferedLoad: Sendable, Hashable {
    /// The load's key.
    public let key: ObjectKey
    /// The highest priority among what wants it (its users' requests, a prefetch).
    public let priority: LoadPriority
    /// The bytes received so far, and the announced total when the server sent one.
    public let progress: LoadProgress
}

/// Chooses which load leaves the loading buffer when a new one would put it over its capacity
/// (``ObjectManager/Configuration/loadingBufferSize``); the manager cancels it unless something
/// the buffer does not govern (an `async` caller, a prefetch) still wants it. Set in
/// ``ObjectManager/Configuration/loadingBufferPushOut``; the default is
/// ``LowestPriorityThenOldest``.
///
/// Asked under the manager's lock, once per load pushed out: keep it short.
///
/// ```swift
/// /// Keeps the loads furthest along: pushes out the one with the fewest bytes, the new one aside.
/// struct LeastProgressFirst: LoadingBufferPushOutPolicy {
///     func loadToPushOut(_ loads: [BufferedLoad]) -> Int {
///         loads.indices.dropLast().min { loads[$0].progress.receivedBytes < loads[$1].progress.receivedBytes }
///             ?? loads.count - 1
///     }
/// }
/// ```
public protocol LoadingBufferPushOutPolicy: Sendable {
    /// The index in `loads` of the load to push out.
    ///
    /// - Parameter loads: The loads in the buffer, oldest first; the last is the one just added.
    ///   One more than the capacity (or more, when the capacity was lowered).
    /// - Returns: An index of `loads`; one outside it pushes out the oldest.
    func loadToPushOut(_ loads: [BufferedLoad]) -> Int
}

/// The default push-out order: the load of the lowest ``LoadPriority`` goes first, and the
/// oldest among equals, the new one included. With equal priorities this is a FIFO (HJCache's
/// loading buffer); a low-priority load never pushes out a higher one.
public struct LowestPriorityThenOldest: LoadingBufferPushOutPolicy {
    /// Creates the default order.
    public init() {}

    /// The first load of the lowest priority.
    ///
    /// - Parameter loads: The loads in the buffer, oldest first.
    /// - Returns: The index of the first load of the lowest priority.
    public func loadToPushOut(_ loads: [BufferedLoad]) -> Int {
        Self.index(in: loads, priority: \.priority)
    }

    /// The first element of the lowest priority (the buffer uses it on its own entries, so that
    /// the default builds no `BufferedLoad`).
    static func index<Element>(in elements: [Element], priority: (Element) -> LoadPriority) -> Int {
        var victim = 0
        for index in elements.indices.dropFirst() where priority(elements[index]) < priority(elements[victim]) {
            victim = index
        }
        return victim
    }
}
