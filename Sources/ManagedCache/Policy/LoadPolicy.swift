import Foundation

/// How a manager loads, caches and delivers objects: HJCache's `HJMOPolicy`, with every option
/// implemented. Set once per manager (``ObjectManager/Configuration/policy``) and override any field
/// per request with ``PolicyOverrides``.
///
/// ```swift
/// // Assumes `feedURL` (a URL).
/// var configuration = ObjectManager.Configuration()
/// configuration.policy.timeout = 15
/// configuration.policy.freshness = .fixed(seconds: 7 * 86_400)  // "cache for a week"
/// let manager = ObjectManager(configuration: configuration)
///
/// var request = ObjectRequest(url: feedURL)
/// request.policy.staleWhileRevalidate = true  // this request only
/// ```
public struct LoadPolicy: Sendable, Hashable {
    /// Seconds without a single byte arriving before a load fails with `.timedOut`. Default 30.
    /// Measured by the manager itself, so fractions of a second work on Linux too.
    public var timeout: Double = 30
    /// When every user of a loading object has gone: `true` finishes the load into the caches
    /// (HJCache's behaviour: a later `manage` finds it), `false` cancels it. Default `true`.
    public var finishLoadingWithoutUsers: Bool = true
    /// Whether file-cache hits are read and decoded on the calling thread inside `manage`
    /// (`.synchronous`, no placeholder flash, for small objects) or in the background (`.asynchronous`,
    /// the default: the caller's thread never touches the disk).
    public var fileCacheDelivery: FileCacheDelivery = .asynchronous
    /// Whether decoded objects are kept in the manager's memory cache. Default `true`.
    public var cacheInMemory: Bool = true
    /// Whether downloaded bytes are stored in the manager's file cache, if it has one. Default `true`.
    public var cacheInFile: Bool = true
    /// The largest body accepted, in bytes; larger downloads stop with `.tooLarge`. Default 256 MiB.
    public var maximumBodySize: Int = 256 << 20
    /// Automatic retries of transient failures (timeouts, connection errors, 5xx).
    public var retry: RetryPolicy = RetryPolicy()
    /// The longest a key that failed permanently (4xx, undecodable) is refused without a request:
    /// the cap of the failure memory's backoff. Default 10 minutes; 0 turns the failure memory off.
    ///
    /// After a key's first failure it is refused for ``failureMemoryFirstInterval``, after each
    /// further failure in a row twice as long as before, up to this. A success, or
    /// ``ObjectManager/forgetFailure(for:)`` (a "tap to retry"), starts over.
    public var failureMemoryInterval: Double = 600
    /// How long a key is refused after its first permanent failure (default 5 seconds): long
    /// enough that a screen of cells does not send the same bad request once per cell, short
    /// enough that a server's passing 404 does not blank an image for long. Each further failure
    /// in a row doubles it, up to ``failureMemoryInterval``. Manager-wide (not a per-request override).
    public var failureMemoryFirstInterval: Double = 5
    /// Whether loads started for users take a slot in the loading buffer and can be pushed out by
    /// newer loads. Default `true` for users; `false` for `async` calls, which cancel through their task.
    public var participatesInLoadingBuffer: Bool = true
    /// How freshness is decided for HTTP responses: from the server's headers (the default), fixed,
    /// or never revalidated. A stale cached response is revalidated with a conditional request
    /// (`If-None-Match` / `If-Modified-Since`); a `304` refreshes it without a download or a decode.
    public var freshness: FreshnessPolicy = .fromServer(defaultMaxAge: nil)
    /// Deliver a stale object at once and revalidate it in the background; users still showing the
    /// key receive the new object if the server has one. Not applied to `must-revalidate` or
    /// `no-cache` responses. Default `false`.
    public var staleWhileRevalidate: Bool = false
    /// Whether, and how stale, a cached HTTP response is delivered when revalidating it fails
    /// with a network error (no connection, refused, reset, timed out) or a 500, 502, 503 or 504,
    /// instead of the failure. Never for `must-revalidate` or `no-cache` responses, never for any
    /// other status. Default ``StaleIfErrorPolicy/fromServer(defaultMaximumStaleness:)`` with
    /// `nil`: the response's `stale-if-error=N` bounds it where it has one, and otherwise the last
    /// copy is shown however old it is, as an app opened offline should. See <doc:HTTPCaching>.
    public var staleIfError: StaleIfErrorPolicy = .fromServer(defaultMaximumStaleness: nil)
    /// Keep the partial data of an interrupted large download and resume it with `Range` +
    /// `If-Range` on the next request (needs a file cache that supports it, as `FileCache` does).
    /// Default `true`.
    public var resumesDownloads: Bool = true
    /// Whether the bytes a load writes to the file cache are pinned there: kept by the file
    /// cache's limits, trims and expiry, within its pinned quota, until unpinned
    /// (``ObjectManager/unpin(_:)``) or removed. For what must stay offline: set it on the
    /// requests of an article saved for later, or prefetch them with it. The pin is made with the
    /// commit; a prefetch pins the bytes it finds already cached by key; a user's load that
    /// finds them cached writes nothing, so pin those by key (``ObjectManager/pin(_:)``). When the pin fails (over the quota, a file cache that cannot
    /// pin) the object is still delivered and the failure reported as
    /// ``ManagerEvent/fileCacheFailure(key:operation:error:)``. Default `false`.
    public var pinsInFileCache: Bool = false

    /// The defaults listed on each property.
    public init() {}

    /// Applies a request's overrides.
    ///
    /// - Parameter overrides: The fields to replace; `nil` fields keep this policy's value.
    /// - Returns: This policy with every non-`nil` field of `overrides` applied.
    public func applying(_ overrides: PolicyOverrides) -> LoadPolicy {
        var policy = self
        if let value = overrides.timeout { policy.timeout = value }
        if let value = overrides.finishLoadingWithoutUsers { policy.finishLoadingWithoutUsers = value }
        if let value = overrides.fileCacheDelivery { policy.fileCacheDelivery = value }
        if let value = overrides.cacheInMemory { policy.cacheInMemory = value }
        if let value = overrides.cacheInFile { policy.cacheInFile = value }
        if let value = overrides.maximumBodySize { policy.maximumBodySize = value }
        if let value = overrides.retry { policy.retry = value }
        if let value = overrides.failureMemoryInterval { policy.failureMemoryInterval = value }
        if let value = overrides.participatesInLoadingBuffer { policy.participatesInLoadingBuffer = value }
        if let value = overrides.freshness { policy.freshness = value }
        if let value = overrides.staleWhileRevalidate { policy.staleWhileRevalidate = value }
        if let value = overrides.staleIfError { policy.staleIfError = value }
        if let value = overrides.resumesDownloads { policy.resumesDownloads = value }
        if let value = overrides.pinsInFileCache { policy.pinsInFileCache = value }
        return policy
    }
}

/// Per-request changes to a manager's `LoadPolicy`; `nil` fields keep the manager's value.
///
/// A handler is shared by every user of a key, so the load runs with the policy of the request
/// that started it; later users of the same key join that load as it is.
public struct PolicyOverrides: Sendable, Hashable {
    /// Replaces `LoadPolicy.timeout` (idle seconds).
    public var timeout: Double?
    /// Replaces `LoadPolicy.finishLoadingWithoutUsers`.
    public var finishLoadingWithoutUsers: Bool?
    /// Replaces `LoadPolicy.fileCacheDelivery`.
    public var fileCacheDelivery: FileCacheDelivery?
    /// Replaces `LoadPolicy.cacheInMemory`.
    public var cacheInMemory: Bool?
    /// Replaces `LoadPolicy.cacheInFile`.
    public var cacheInFile: Bool?
    /// Replaces `LoadPolicy.maximumBodySize`.
    public var maximumBodySize: Int?
    /// Replaces `LoadPolicy.retry`.
    public var retry: RetryPolicy?
    /// Replaces `LoadPolicy.failureMemoryInterval`.
    public var failureMemoryInterval: Double?
    /// Replaces `LoadPolicy.participatesInLoadingBuffer`.
    public var participatesInLoadingBuffer: Bool?
    /// Replaces `LoadPolicy.freshness`.
    public var freshness: FreshnessPolicy?
    /// Replaces `LoadPolicy.staleWhileRevalidate`.
    public var staleWhileRevalidate: Bool?
    /// Replaces `LoadPolicy.resumesDownloads`.
    public var resumesDownloads: Bool?
    /// Replaces `LoadPolicy.staleIfError`.
    public var staleIfError: StaleIfErrorPolicy?
    /// Replaces `LoadPolicy.pinsInFileCache`: `true` on the requests whose bytes must stay
    /// (prefetching an article for offline reading, say).
    public var pinsInFileCache: Bool?

    /// Creates overrides; every field defaults to `nil`, "use the manager's value".
    ///
    /// - Parameters:
    ///   - timeout: Replaces ``LoadPolicy/timeout``.
    ///   - finishLoadingWithoutUsers: Replaces ``LoadPolicy/finishLoadingWithoutUsers``.
    ///   - fileCacheDelivery: Replaces ``LoadPolicy/fileCacheDelivery``.
    ///   - cacheInMemory: Replaces ``LoadPolicy/cacheInMemory``.
    ///   - cacheInFile: Replaces ``LoadPolicy/cacheInFile``.
    ///   - maximumBodySize: Replaces ``LoadPolicy/maximumBodySize``.
    ///   - retry: Replaces ``LoadPolicy/retry``.
    ///   - failureMemoryInterval: Replaces ``LoadPolicy/failureMemoryInterval``.
    ///   - participatesInLoadingBuffer: Replaces ``LoadPolicy/participatesInLoadingBuffer``.
    ///   - freshness: Replaces ``LoadPolicy/freshness``.
    ///   - staleWhileRevalidate: Replaces ``LoadPolicy/staleWhileRevalidate``.
    ///   - resumesDownloads: Replaces ``LoadPolicy/resumesDownloads``.
    ///   - staleIfError: Replaces ``LoadPolicy/staleIfError``.
    ///   - pinsInFileCache: Replaces ``LoadPolicy/pinsInFileCache``.
    public init(
        timeout: Double? = nil, finishLoadingWithoutUsers: Bool? = nil,
        fileCacheDelivery: FileCacheDelivery? = nil, cacheInMemory: Bool? = nil,
        cacheInFile: Bool? = nil, maximumBodySize: Int? = nil, retry: RetryPolicy? = nil,
        failureMemoryInterval: Double? = nil, participatesInLoadingBuffer: Bool? = nil,
        freshness: FreshnessPolicy? = nil, staleWhileRevalidate: Bool? = nil, resumesDownloads: Bool? = nil,
        staleIfError: StaleIfErrorPolicy? = nil, pinsInFileCache: Bool? = nil
    ) {
        self.timeout = timeout
        self.finishLoadingWithoutUsers = finishLoadingWithoutUsers
        self.fileCacheDelivery = fileCacheDelivery
        self.cacheInMemory = cacheInMemory
        self.cacheInFile = cacheInFile
        self.maximumBodySize = maximumBodySize
        self.retry = retry
        self.failureMemoryInterval = failureMemoryInterval
        self.participatesInLoadingBuffer = participatesInLoadingBuffer
        self.freshness = freshness
        self.staleWhileRevalidate = staleWhileRevalidate
        self.resumesDownloads = resumesDownloads
        self.staleIfError = staleIfError
        self.pinsInFileCache = pinsInFileCache
    }
}

/// Whether a stale cached HTTP response is delivered when revalidating it fails, and how stale it
/// may be. See ``LoadPolicy/staleIfError``.
///
/// "Stale" counts from the end of the response's freshness: a response fresh for an hour, shown
/// two hours after it arrived, is one hour stale.
///
/// ```swift
/// // Assumes `feedURL` (a URL).
/// var configuration = ObjectManager.Configuration()
/// configuration.policy.staleIfError = .fromServer(defaultMaximumStaleness: 7 * 86_400)  // a week at most
/// let manager = ObjectManager(configuration: configuration)
///
/// var request = ObjectRequest(url: feedURL)
/// request.policy.staleIfError = .never  // this request: an error rather than an old feed
/// ```
public enum StaleIfErrorPolicy: Sendable, Hashable {
    /// The response's `stale-if-error=N` (RFC 5861) bounds how stale the copy may be; where the
    /// response set none, `defaultMaximumStaleness` seconds do (`nil`: no bound, the last copy is
    /// shown however old). The default, with `nil`.
    case fromServer(defaultMaximumStaleness: Double?)
    /// A failed revalidation is delivered as the failure: the stale copy is never shown.
    case never
}

/// Where a file-cache hit is read and decoded. See `LoadPolicy.fileCacheDelivery`.
public enum FileCacheDelivery: Sendable, Hashable {
    /// Read and decode on the thread that called `manage`, before it returns.
    case synchronous
    /// Read and decode in the background, then deliver like a network load.
    case asynchronous
}

/// Automatic retries of transient failures within one load, with exponential backoff.
public struct RetryPolicy: Sendable, Hashable {
    /// Retries after the first attempt. Default 2; 0 disables retrying.
    public var maximumRetries: Int
    /// Delay before the first retry, in seconds; each further retry doubles it. Default 0.5.
    public var initialDelay: Double

    /// Creates a retry policy.
    ///
    /// - Parameters:
    ///   - maximumRetries: Retries after the first attempt. Default 2; 0 disables retrying.
    ///   - initialDelay: Seconds before the first retry; each further retry doubles it. Default 0.5.
    public init(maximumRetries: Int = 2, initialDelay: Double = 0.5) {
        self.maximumRetries = maximumRetries
        self.initialDelay = initialDelay
    }

    /// No automatic retries.
    public static let none = RetryPolicy(maximumRetries: 0, initialDelay: 0)

    /// The delay before retry number `attempt` (1-based).
    func delay(beforeRetry attempt: Int) -> Double {
        initialDelay * Double(1 << min(max(attempt - 1, 0), 16))
    }
}
