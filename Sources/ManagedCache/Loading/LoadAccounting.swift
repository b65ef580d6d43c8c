import ManagedCacheLocking

/// Counts the objects a load creates that are still alive in this process: fetches running,
/// download receivers, URLSession transfers and file-cache writers (each of which holds a
/// descriptor in `loading/` while it is open).
///
/// For the reliability tests and the soak (which look for leaked loads and descriptors): once every load has ended, all four are
/// back to zero whatever mix of cancellation, restart, failure and resumption happened. A leak
/// here is a leak of descriptors and memory. Process-wide, so read it where no other manager
/// runs (a child process, the soak), or compare against a baseline.
@_spi(Diagnostics) public enum LoadAccounting {
    /// A snapshot of the counts.
    public struct Counts: Sendable, Hashable, CustomStringConvertible {
        /// `FetchOperation.run` calls under way (one per fetch task).
        public var fetches: Int
        /// Download receivers alive (each may hold a writer).
        public var receivers: Int
        /// `URLSessionDataLoader` transfers alive (registered, not yet over).
        public var transfers: Int
        /// File-cache writers alive (`FileCache`, `BigFileCache`).
        public var writers: Int

        /// Whether nothing is alive.
        public var isZero: Bool { fetches == 0 && receivers == 0 && transfers == 0 && writers == 0 }

        public var description: String {
            "\(fetches) fetches, \(receivers) receivers, \(transfers) transfers, \(writers) writers"
        }
    }

    static let fetches = Lock<Int>(0)
    static let receivers = Lock<Int>(0)
    static let transfers = Lock<Int>(0)
    static let writers = Lock<Int>(0)

    /// How many times FoundationNetworking was made to wait for a delegate to catch up
    /// (back-pressure, Linux: see `BoundedDelegateQueue`), over the process's life.
    public static var backPressureWaits: Int { backPressureWaitCount.withLock { $0 } }
    static let backPressureWaitCount = Lock<Int>(0)

    /// How many cancelled URLSession transfers ended by themselves because the session had not
    /// reported their end within `SessionTransfer.cancellationGrace`, over the process's life.
    public static var unreportedCancellations: Int { unreportedCancellationCount.withLock { $0 } }
    static let unreportedCancellationCount = Lock<Int>(0)

    /// How many URLSession transfers the loader has made (one per task), over the process's life.
    public static var transfersMade: Int { transfersMadeCount.withLock { $0 } }
    static let transfersMadeCount = Lock<Int>(0)

    /// How many of them the loader cancelled, over the process's life.
    public static var transfersCancelled: Int { transfersCancelledCount.withLock { $0 } }
    static let transfersCancelledCount = Lock<Int>(0)

    /// The counts now.
    public static var current: Counts {
        Counts(
            fetches: fetches.withLock { $0 }, receivers: receivers.withLock { $0 },
            transfers: transfers.withLock { $0 }, writers: writers.withLock { $0 })
    }
}
