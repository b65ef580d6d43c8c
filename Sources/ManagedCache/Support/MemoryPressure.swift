import ManagedCacheLocking

/// A signal to free memory, and what each signal frees (``trim``): the one place that decides it.
///
/// The package listens to the system on its own (`MemoryPressureCenter`):
///
/// | platform | signal | pressure |
/// | --- | --- | --- |
/// | every Apple platform | the memory-pressure dispatch source (`DispatchSource.makeMemoryPressureSource`), warning / critical | ``warning`` / ``critical`` |
/// | iOS, tvOS, visionOS | `UIApplication.didReceiveMemoryWarningNotification` | ``critical`` |
/// | iOS, tvOS, visionOS | `UIApplication.didEnterBackgroundNotification` | ``background`` |
/// | Linux | nothing: the system has no such signal for a process | — |
///
/// On Linux (and wherever an app knows more than the system tells), ``signal()`` delivers a
/// pressure to every manager and every animation's frame buffer of the process, as the system's
/// signals do: call it from a monitor of your own (a cgroup's `memory.events`, the kernel's
/// pressure-stall information).
///
/// | pressure | memory cache | undecoded bytes | animation frame buffers |
/// | --- | --- | --- | --- |
/// | ``warning`` | trimmed to half its cost limit (least recently used first) | dropped | the next frame kept |
/// | ``critical`` | emptied | dropped | emptied |
/// | ``background`` | trimmed to a tenth of its cost limit | dropped | emptied (nothing plays off screen) |
///
/// Objects users hold stay with them; frames on screen stay on screen (a view holds the one it
/// shows). What a trim dropped is loaded again from the file cache when asked for.
public enum MemoryPressure: Sendable, Hashable, CaseIterable {
    /// The system's memory is getting low.
    case warning
    /// The system's memory is critically low: apps are about to be terminated.
    case critical
    /// The app moved to the background, where the system terminates the apps using the most
    /// memory first.
    case background

    /// What this pressure frees.
    public var trim: MemoryTrim {
        switch self {
        case .warning: MemoryTrim(memoryCacheCostFraction: 0.5, dropsUndecodedData: true, frameBuffers: .keepNextFrame)
        case .critical: MemoryTrim(memoryCacheCostFraction: 0, dropsUndecodedData: true, frameBuffers: .empty)
        case .background: MemoryTrim(memoryCacheCostFraction: 0.1, dropsUndecodedData: true, frameBuffers: .empty)
        }
    }

    /// Delivers this pressure to every manager and every animation frame buffer of the process,
    /// as the system's own signals are delivered, on the calling thread.
    public func signal() {
        MemoryPressureCenter.shared.post(self)
    }
}

/// What a ``MemoryPressure`` frees.
public struct MemoryTrim: Sendable, Hashable {
    /// What an animation's buffer of decoded frames keeps.
    public enum FrameBufferTrim: Sendable, Hashable {
        /// Every frame it holds.
        case keepAll
        /// Only the frame a view needs next, so that playing goes on without a gap.
        case keepNextFrame
        /// No frame: each is decoded again when a view asks for it.
        case empty
    }

    /// The share of the memory cache's cost limit its entries may still cost (0 empties it,
    /// 1 keeps everything), the least recently used evicted first.
    public var memoryCacheCostFraction: Double
    /// Whether the undecoded bytes kept for other decoders of a download are dropped.
    public var dropsUndecodedData: Bool
    /// What animation frame buffers keep.
    public var frameBuffers: FrameBufferTrim

    /// The most cost a memory cache keeps after this trim.
    ///
    /// - Parameter costLimit: The cache's cost limit.
    /// - Returns: `costLimit` × ``memoryCacheCostFraction``, rounded down.
    public func memoryCacheCost(keptOf costLimit: Int) -> Int {
        guard memoryCacheCostFraction > 0 else { return 0 }
        guard memoryCacheCostFraction < 1 else { return costLimit }
        return Int((Double(costLimit) * memoryCacheCostFraction).rounded(.down))
    }
}

extension ObjectManager {
    /// Frees what `pressure` says (``MemoryPressure/trim``): the memory cache trimmed or emptied,
    /// undecoded bytes dropped. Called on every signal the system sends (see ``MemoryPressure``);
    /// usable on its own too. Objects users hold stay with them.
    ///
    /// - Parameter pressure: How much to free.
    public func handleMemoryPressure(_ pressure: MemoryPressure) {
        let trim = pressure.trim
        if trim.memoryCacheCostFraction <= 0 {
            removeAllObjects()
            return
        }
        memoryCache.trim(toCount: memoryCache.countLimit, cost: trim.memoryCacheCost(keptOf: memoryCache.costLimit))
        if trim.dropsUndecodedData { undecodedData.removeAll() }
    }
}
