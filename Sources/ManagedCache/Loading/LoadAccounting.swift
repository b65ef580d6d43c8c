import Synchronization

/// Counts the objects a load creates that are still alive in this process: fetches running,
/// download receivers, URLSession transfers and file-cache writers (each of which holds a
/// descriptor in `loading/` while it is open).
///
/// For the reliability tests and the soak (issue 19): once every load has ended, all four are
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

    static let fetches = Atomic<Int>(0)
    static let receivers = Atomic<Int>(0)
    static let transfers = Atomic<Int>(0)
    static let writers = Atomic<Int>(0)

    /// The counts now.
    public static var current: Counts {
        Counts(fetches: fetches.load(ordering: .relaxed), receivers: receivers.load(ordering: .relaxed),
               transfers: transfers.load(ordering: .relaxed), writers: writers.load(ordering: .relaxed))
    }
}
