import Foundation

extension ObjectManager {
    /// How a manager is set up. Every field has a default.
    public struct Configuration: Sendable {
        /// How many loads started for users may run at once before the oldest is cancelled. Default 12, at least 1.
        /// Make it at least the number of objects on screen; a larger buffer loads ahead.
        public var loadingBufferSize: Int = 12
        /// How many decoded objects the memory cache keeps. Default 20; 0 keeps none.
        public var memoryCacheCountLimit: Int = 20
        /// The memory cache's byte limit (by each object's cost). Default 64 MiB; 0 keeps none.
        public var memoryCacheCostLimit: Int = 64 << 20
        /// Which objects the memory cache evicts first when it is over a limit. Default
        /// ``MemoryCacheEviction/leastRecentlyUsed``; ``MemoryCacheEviction/custom(_:)`` plugs in a
        /// ``MemoryCacheEvictionPolicy`` (least frequently used, say).
        public var memoryCacheEviction: MemoryCacheEviction = .leastRecentlyUsed
        /// Which load a new one pushes out of a full loading buffer. Default
        /// ``LowestPriorityThenOldest``: the lowest priority, then the oldest (a FIFO among equals).
        public var loadingBufferPushOut: any LoadingBufferPushOutPolicy = LowestPriorityThenOldest()
        /// Where downloaded bytes are kept between runs. Default `nil`: memory and network only.
        public var fileCache: (any FileCaching)?
        /// How bytes are fetched. Default `DefaultDataLoader()` (URLSession for http/https, files for `file://`).
        public var dataLoader: any DataLoading = DefaultDataLoader()
        /// The policy every request starts from.
        public var policy = LoadPolicy()
        /// How many prefetches run at once; the rest wait. Default 2.
        public var prefetchConcurrency: Int = 2
        /// Bytes kept in memory undecoded when a prefetch has no decoder and there is no file cache. Default 8 MiB.
        public var undecodedDataLimit: Int = 8 << 20
        /// Downloads up to this size stay in memory beside the file cache, so decoding need not read
        /// them back. Larger ones go only to disk. Default 4 MiB.
        public var inMemoryThreshold: Int = 4 << 20
        /// The budget of a synchronous file-cache hit (`LoadPolicy.fileCacheDelivery ==
        /// .synchronous`, no placeholder flash): entries up to this many bytes are read and decoded
        /// on the thread that called `manage`, before it returns; larger ones are read in the
        /// background and delivered like a load. Default 512 KiB (about 0.1 ms to read from the
        /// page cache). See also ``synchronousFileReadTimeBudget``.
        public var synchronousFileReadLimit: Int = 512 << 10
        /// The time side of that budget, in seconds, counted from the start of the read: when the
        /// lookup in the index already took longer, the read is left to the load, in the
        /// background; when the read took longer (a cold or busy disk, a preempted thread), the
        /// decoding and delivery finish in the background instead. Decoding is bounded apart: a
        /// read within the budget is decoded on the calling thread, and once a decoder took
        /// longer than 4 ms to decode an entry there, its entries of that size or larger are
        /// read and decoded in the background instead, like a load's. Waits for the file cache's
        /// own lock (``FileCaching/entry(forKey:waitingAtMost:)``) also end by then, and each
        /// lasts at most ``manageLockWaitBudget``. Default
        /// 0.0001 (0.1 ms: a small file from the page cache is read in tens of microseconds, and
        /// a read that takes longer is the one a frame cannot afford). Tests that need every hit
        /// delivered inside `manage` set a large value.
        public var synchronousFileReadTimeBudget: Double = 0.000_1
        /// How long `manage` waits for a lock, in seconds: the manager's own, and a `FileCache`'s
        /// or `BigFileCache`'s while reading a hit synchronously. Past it (or while calls left
        /// earlier still wait) `manage` does not wait: it leaves its work to be done, in order,
        /// by the lock's holder or on a background queue, and returns. A memory hit is still
        /// delivered before `manage` returns; any other answer (a shared object, a remembered
        /// failure, a file-cache hit) then comes a moment later, like a load's. Default 0.00003
        /// (30 µs: a few of the lock's usual holds, a small part of a frame). Why: a thread that
        /// holds a lock is sometimes preempted, and its waiters then wait for milliseconds (see
        /// the Performance article). Use a large value to make `manage` always answer those on
        /// the calling thread, at the cost of that wait.
        public var manageLockWaitBudget: Double = 0.000_03
        /// Called with file-cache failures, corrupt entries and failed loads, for logging. Default `nil`.
        public var eventHandler: (@Sendable (ManagerEvent) -> Void)?
        /// The shortest time between two previews of one download for one user (see
        /// `PreviewDecoding`), in seconds: a stage completed sooner is shown with the next one.
        /// Default 0.25; 0 delivers a preview for every stage.
        public var previewInterval: Double = 0.25
        /// How fast the loads of users in the loading buffer go to the loader: `burst` at once,
        /// then `loadsPerSecond`; the others wait, and one cancelled while it waits (pushed out by
        /// a fast scroll) never reaches the network. Memory and file-cache hits, `async` calls and
        /// prefetches never wait. Default
        /// ``LoadRateLimit/default`` (80 per second after a burst of 25, as Nuke's pipeline);
        /// `nil` sends every load at once. See ``LoadRateLimit``.
        public var loadRateLimit: LoadRateLimit? = .default
        /// How long one decode on the thread that called `manage` may take before the decoder's
        /// entries of that size or larger are decoded in the background (see
        /// ``synchronousFileReadTimeBudget``), in seconds: a quarter of a 60 Hz frame.
        var synchronousDecodeTimeBudget: Double = 0.004
        /// The clock of the failure memory's intervals; tests replace it to step time.
        var failureClock: @Sendable () -> MonotonicInstant = { .now }
        /// Called on the delivering thread after a delivery was found current and before the user
        /// is called: tests widen that window with it to show that no `manage` or `unmanage`
        /// returns while a callback for the request it replaced can still land.
        var afterDeliveryCheck: (@Sendable (UserEvent) -> Void)?

        /// The defaults listed on each property.
        public init() {}
    }
}
