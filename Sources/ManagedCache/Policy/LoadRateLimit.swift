/// How fast a manager sends loads to its loader (``ObjectManager/Configuration/loadRateLimit``):
/// a token bucket that lets `burst` loads go at once, then `loadsPerSecond`.
///
/// Why: a fast scroll through a long list starts a load for every cell it passes, and the loading
/// buffer cancels most of them a few milliseconds later. Without a limit each of those loads
/// reaches the network: a request, often a connection torn down by the cancellation, and the
/// transport's threads busy with both, taking the CPU from the main thread that is scrolling.
/// With a limit, loads beyond the burst wait for a token, and a load cancelled while it waits
/// never reaches the loader and spends no token. What is on screen when the scroll stops loads
/// at once: the burst is larger than a screen of cells, and it refills in a fraction of a second.
///
/// What waits: loads started for users in the loading buffer (`manage`), when they go to the
/// loader. Memory and file-cache hits never wait, nor do `async` calls (``ObjectManager/object(for:decoder:progress:)``)
/// and prefetches: nothing pushes those out a moment later, so waiting would only delay them (a
/// user that joins a waiting load waits with it). Waiting loads go highest priority first
/// (``LoadPriority``), first come first served within one. A load whose users have all gone
/// (rows scrolled past, whose cells show other rows now) counts as ``LoadPriority/veryLow``, so
/// when a scroll stops the cells on screen go first. The idle timeout counts from when a
/// load leaves the wait, not while it waits. Nuke's image pipeline paces its data loads with the
/// same defaults.
///
/// ```swift
/// var configuration = ObjectManager.Configuration()
/// configuration.loadRateLimit = LoadRateLimit(loadsPerSecond: 200, burst: 50)  // a faster pace
/// configuration.loadRateLimit = nil  // every load goes to the loader at once
/// ```
public struct LoadRateLimit: Sendable, Hashable {
    /// How many loads go on, on average, per second once the burst is spent. Default 80; a value
    /// that is not positive (or NaN) counts as 1.
    public var loadsPerSecond: Double
    /// How many loads go at once after a quiet moment (the bucket's size). Default 25; values
    /// below 1 count as 1.
    public var burst: Int

    /// A limit of `loadsPerSecond` after a burst of `burst`.
    ///
    /// - Parameters:
    ///   - loadsPerSecond: The pace once the burst is spent, in loads per second. Default 80.
    ///   - burst: How many loads go at once after a quiet moment. Default 25.
    public init(loadsPerSecond: Double = 80, burst: Int = 25) {
        self.loadsPerSecond = loadsPerSecond
        self.burst = burst
    }

    /// 80 loads per second after a burst of 25.
    public static let `default` = LoadRateLimit()
}
