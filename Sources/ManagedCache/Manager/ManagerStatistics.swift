import ManagedCacheLocking

/// Counters of what a manager did since it was created (or since `ObjectManager.resetStatistics()`).
/// Read them with `ObjectManager.statistics`; the examples and benchmarks print them.
public struct ManagerStatistics: Sendable, Hashable {
    /// `manage` calls, `async` requests and prefetch requests.
    public var requests = 0
    /// Requests answered from the memory cache.
    public var memoryHits = 0
    /// Requests answered with an object another user's live handler already held.
    public var sharedObjectHits = 0
    /// Requests that joined a load already under way instead of starting one.
    public var coalescedJoins = 0
    /// HTTP (or other loader) requests sent, retries included.
    public var networkRequests = 0
    /// Conditional requests sent to revalidate stale cached objects.
    public var revalidations = 0
    /// Revalidations the server answered with `304 Not Modified` (no body downloaded, no decode).
    public var notModified = 0
    /// Loads whose bytes came from the network and completed.
    public var networkLoads = 0
    /// Loads whose bytes came from the file cache.
    public var fileCacheHits = 0
    /// Loads whose bytes were held undecoded in memory (prefetched with no decoder and no file cache).
    public var undecodedDataHits = 0
    /// Body bytes received from loaders.
    public var bytesDownloaded = 0
    /// Objects decoded.
    public var decodes = 0
    /// Loads cancelled because newer loads pushed them out of the loading buffer.
    public var loadsCancelledByBuffer = 0
    /// Loads cancelled for any reason (buffer, no users, caller, shutdown).
    public var loadsCancelled = 0
    /// Objects decoded into the memory cache by `preloadFromFileCache`.
    public var preloadedObjects = 0
    /// Prefetches started.
    public var prefetchesStarted = 0
    /// Failed loads, by kind of failure.
    public var failures: [FailureKind: Int] = [:]
    /// File-cache operations that failed (disk full, directory gone, corrupt entry found).
    public var fileCacheErrors = 0
    /// Objects the app stored with `ObjectManager.store`.
    public var storedObjects = 0
    /// `manage` calls that did not wait for the manager's lock, busy past
    /// `Configuration.manageLockWaitBudget`: their work was left to the lock's holder.
    public var deferredCalls = 0

    /// All counters at zero.
    public init() {}

    /// The total of `failures`.
    public var totalFailures: Int { failures.values.reduce(0, +) }

    /// Counts a fetch's bytes by where they came from.
    mutating func count(_ origin: DataOrigin) {
        switch origin {
        case .network: networkLoads += 1
        case .fileCache: fileCacheHits += 1
        case .undecodedData: undecodedDataHits += 1
        case .revalidated: notModified += 1
        case .memory, .sharedObject, .stored: break
        }
    }
}

/// The counters of `ManagerStatistics` that loads bump from their own threads, kept apart from
/// the manager's state (see `ObjectManager.transferCounters`) and added to it when read.
struct TransferCounters {
    var networkRequests = 0
    var revalidations = 0
    var bytesDownloaded = 0
    var fileCacheErrors = 0

    /// Adds these counts to `statistics`.
    func add(to statistics: inout ManagerStatistics) {
        statistics.networkRequests += networkRequests
        statistics.revalidations += revalidations
        statistics.bytesDownloaded += bytesDownloaded
        statistics.fileCacheErrors += fileCacheErrors
    }

    /// What a load or a file-cache read calls with an event: counts a file-cache failure or a
    /// corrupt entry in `counters`, then hands the event to the app's handler.
    static func reporter(
        counting counters: Lock<TransferCounters>, then eventHandler: (@Sendable (ManagerEvent) -> Void)?
    ) -> @Sendable (ManagerEvent) -> Void {
        { event in
            switch event {
            case .fileCacheFailure, .corruptEntryRemoved:
                counters.withLock { $0.fileCacheErrors += 1 }
            case .loadFailed, .staleObjectDelivered:
                break
            }
            eventHandler?(event)
        }
    }
}

/// Things a manager reports through `ObjectManager.Configuration.eventHandler`, for logging.
/// More kinds may be added: a `switch` over an event keeps a `default`.
public enum ManagerEvent: Sendable {
    /// A file-cache operation failed; loading went on without it (the object is served from
    /// memory and not cached, or read again from the network).
    ///
    /// - Parameters:
    ///   - key: The data key of the load (its oid or URL string).
    ///   - operation: What the cache was asked to do.
    ///   - error: Why it failed; ``FileCacheError/isOutOfDescriptors`` tells a process that has
    ///     run out of file descriptors.
    case fileCacheFailure(key: String, operation: FileCacheOperation, error: FileCacheError)
    /// A corrupted or truncated file-cache entry was found and removed; the object is reloaded.
    case corruptEntryRemoved(key: String)
    /// A load failed.
    case loadFailed(key: ObjectKey, error: ManagedCacheError)
    /// An object past its HTTP freshness was delivered to a user (an `await` caller included),
    /// once per user: shown while it is revalidated (`revalidationError` `nil`,
    /// stale-while-revalidate) or because revalidating it failed (stale-if-error, with why).
    case staleObjectDelivered(key: ObjectKey, origin: DataOrigin, revalidationError: ManagedCacheError?)
}
