import Dispatch
import ManagedCacheLocking

/// What became of one prefetched request (see ``ObjectManager/prefetchAndWait(_:priority:progress:)``).
public enum PrefetchOutcome: Sendable, Hashable {
    /// Loaded by this prefetch: downloaded (``DataOrigin/network``, ``DataOrigin/revalidated``),
    /// or, with a decoder, read and decoded (``DataOrigin/fileCache``…). The object of ``DataOrigin/stored``
    /// came from the app storing the key meanwhile.
    case loaded(DataOrigin)
    /// There was nothing to load: the object was in memory (``DataOrigin/memory``,
    /// ``DataOrigin/sharedObject``), or, without a decoder, its bytes were already in the file cache
    /// (``DataOrigin/fileCache``) or kept undecoded (``DataOrigin/undecodedData``).
    case alreadyCached(DataOrigin)
    /// Loading failed: the typed error (a URL the loader cannot load fails with
    /// ``ManagedCacheError/invalidRequest(reason:)``; a key that failed moments ago with
    /// ``ManagedCacheError/recentlyFailed(_:)``).
    case failed(ManagedCacheError)
    /// The pin the request's policy asked for (``LoadPolicy/pinsInFileCache``) could not be made:
    /// over the pinned quota (a pinned commit over it is refused, so the bytes are not in the file
    /// cache: ``FileCacheError/noEntry(key:)``), or a file cache that cannot pin (the bytes are
    /// cached, unpinned). The object of a decoder prefetch is in memory all the same. Counted as failed.
    case notPinned(FileCacheError)
    /// The prefetch was cancelled (``ObjectManager/cancelPrefetching(_:)``, ``ObjectManager/cancelAll()``,
    /// the awaiting task cancelled, the manager released) before it finished. A user that joined
    /// its load keeps it going for itself.
    case cancelled

    /// The outcome of a bytes-only prefetch whose fetch ended with `result`.
    init(fetchResult result: Result<FetchedData, ManagedCacheError>) {
        switch result {
        case .success(let fetched):
            switch fetched.origin {
            case .fileCache, .undecodedData, .memory, .sharedObject: self = .alreadyCached(fetched.origin)
            case .network, .revalidated, .stored: self = .loaded(fetched.origin)
            }
        case .failure(.cancelled): self = .cancelled
        case .failure(let error): self = .failed(error)
        }
    }

    /// Whether the object (or its bytes) is in the caches now: loaded or already cached.
    public var isCached: Bool {
        switch self {
        case .loaded, .alreadyCached, .notPinned: return true
        case .failed, .cancelled: return false
        }
    }
}

extension PrefetchOutcome: CustomStringConvertible {
    /// For logs: `loaded from network`, `already cached in fileCache`, `failed: HTTP status 404`,
    /// `not pinned: …`, `cancelled`.
    public var description: String {
        switch self {
        case .loaded(let origin): return "loaded from \(origin)"
        case .alreadyCached(let origin): return "already cached in \(origin)"
        case .failed(let error): return "failed: \(error)"
        case .notPinned(let error): return "not pinned: \(error)"
        case .cancelled: return "cancelled"
        }
    }
}

/// One prefetched request and its outcome.
public struct PrefetchResult: Sendable, Hashable {
    /// The request, as it was passed.
    public let request: ObjectRequest
    /// What became of it.
    public let outcome: PrefetchOutcome
}

extension PrefetchResult: CustomStringConvertible {
    /// The request's URL and its outcome: `https://example.com/a.jpg: loaded from network`.
    public var description: String { "\(request.url.absoluteString): \(outcome)" }
}

/// How far a reporting prefetch has come, as counts.
public struct PrefetchProgress: Sendable, Hashable, CustomStringConvertible {
    /// How many requests the prefetch was given.
    public let total: Int
    /// How many were loaded.
    public internal(set) var loaded = 0
    /// How many needed nothing: already cached.
    public internal(set) var alreadyCached = 0
    /// How many failed (a failed pin included: ``PrefetchOutcome/notPinned(_:)``).
    public internal(set) var failed = 0
    /// How many were cancelled.
    public internal(set) var cancelled = 0

    /// How many have an outcome.
    public var finished: Int { loaded + alreadyCached + failed + cancelled }
    /// The part finished, from 0 to 1 (1 for an empty prefetch).
    public var fractionCompleted: Double { total == 0 ? 1 : Double(finished) / Double(total) }

    /// The counts for logs: `4 of 20: 2 loaded, 1 already cached, 1 failed, 0 cancelled`.
    public var description: String {
        "\(finished) of \(total): \(loaded) loaded, \(alreadyCached) already cached, \(failed) failed, \(cancelled) cancelled"
    }

    init(total: Int) { self.total = total }

    mutating func count(_ outcome: PrefetchOutcome) {
        switch outcome {
        case .loaded: loaded += 1
        case .alreadyCached: alreadyCached += 1
        case .failed, .notPinned: failed += 1
        case .cancelled: cancelled += 1
        }
    }
}

/// What a reporting prefetch did: one result per request, in the order given, and the counts.
public struct PrefetchReport: Sendable, Hashable, CustomStringConvertible {
    /// Every request with its outcome, in the order they were passed.
    public let results: [PrefetchResult]
    /// The counts of the outcomes.
    public let counts: PrefetchProgress

    /// Whether every request's object (or bytes) is in the caches: nothing failed or was cancelled.
    public var isComplete: Bool { counts.failed == 0 && counts.cancelled == 0 }

    /// The requests whose bytes are cached but could not be pinned, with why.
    public var pinFailures: [(request: ObjectRequest, error: FileCacheError)] {
        results.compactMap { result in
            if case .notPinned(let error) = result.outcome { return (result.request, error) }
            return nil
        }
    }

    /// The counts, then each request that failed or was cancelled, one a line.
    public var description: String {
        let notDone = results.filter { result in
            switch result.outcome {
            case .failed, .notPinned, .cancelled: return true
            case .loaded, .alreadyCached: return false
            }
        }
        return ([counts.description] + notDone.map { "  \($0)" }).joined(separator: "\n")
    }

    /// The requests that failed to load, with their errors.
    public var failures: [(request: ObjectRequest, error: ManagedCacheError)] {
        results.compactMap { result in
            if case .failed(let error) = result.outcome { return (result.request, error) }
            return nil
        }
    }
}

/// One reporting prefetch call: collects its requests' outcomes and tells its caller, on a serial
/// lane of its own on the engine's workers (never under the manager's lock, never on the thread that settled the
/// outcome), the progress after each and the report once all have one.
final class PrefetchBatch: Sendable {
    private struct State {
        var outcomes: [PrefetchOutcome?]
        var progress: PrefetchProgress
        var completed = false
    }

    let requests: [ObjectRequest]
    private let state: Lock<State>
    private let progress: (@Sendable (PrefetchProgress) -> Void)?
    private let completion: @Sendable (PrefetchReport) -> Void
    /// Run for a request whose bytes are cached, before its outcome counts: pins them when its
    /// policy asks and returns why that failed (file I/O: on the batch's lane, never under the
    /// manager's lock).
    private let pinIfAsked: (@Sendable (ObjectRequest) -> FileCacheError?)?
    private let callbacks = SerialLane()

    init(
        requests: [ObjectRequest], pinIfAsked: (@Sendable (ObjectRequest) -> FileCacheError?)? = nil,
        progress: (@Sendable (PrefetchProgress) -> Void)?, completion: @escaping @Sendable (PrefetchReport) -> Void
    ) {
        self.requests = requests
        state = Lock(State(outcomes: Array(repeating: nil, count: requests.count), progress: PrefetchProgress(total: requests.count)))
        self.pinIfAsked = pinIfAsked
        self.progress = progress
        self.completion = completion
        if requests.isEmpty { callbacks.async { self.finishIfComplete() } }
    }

    /// Records the outcome of request `index` (the first outcome of a request is kept), on the
    /// batch's lane: under the manager's lock this only queues it.
    func record(_ outcome: PrefetchOutcome, at index: Int) {
        callbacks.async { [self] in
            var outcome = outcome
            if outcome.isCached, let error = pinIfAsked?(requests[index]) { outcome = .notPinned(error) }
            let snapshot = state.withLock { state -> PrefetchProgress? in
                guard state.outcomes[index] == nil else { return nil }
                state.outcomes[index] = outcome
                state.progress.count(outcome)
                return state.progress
            }
            guard let snapshot else { return }
            progress?(snapshot)
            finishIfComplete()
        }
    }

    private func finishIfComplete() {
        let report = state.withLock { state -> PrefetchReport? in
            guard !state.completed, state.progress.finished == state.progress.total else { return nil }
            state.completed = true
            let results = zip(requests, state.outcomes).map { PrefetchResult(request: $0, outcome: $1 ?? .cancelled) }
            return PrefetchReport(results: results, counts: state.progress)
        }
        if let report { completion(report) }
    }
}

/// The reporting prefetches waiting for outcomes, under the manager's lock: each request of a
/// batch follows its queued item until it starts, then the fetch (bytes only) or the handler
/// (with a decoder) that loads it, and is settled when that ends.
struct PrefetchWatch {
    /// A request of a batch.
    struct Watcher {
        let batch: PrefetchBatch
        let index: Int
    }

    // Nothing is watched in the common case: each method below then returns at once, before
    // hashing a key, so the hooks on the load paths cost a branch.
    private var queued: [PrefetchQueue.Identity: [Watcher]] = [:]
    private var onFetch: [UInt64: [Watcher]] = [:]
    private var onHandler: [ObjectKey: [Watcher]] = [:]

    mutating func watchQueued(_ identity: PrefetchQueue.Identity, _ watcher: Watcher) {
        queued[identity, default: []].append(watcher)
    }

    mutating func watchFetch(_ identifier: UInt64, _ watcher: Watcher) {
        onFetch[identifier, default: []].append(watcher)
    }

    mutating func watchHandler(_ key: ObjectKey, _ watcher: Watcher) {
        onHandler[key, default: []].append(watcher)
    }

    /// The queued item of `identity` started a fetch (or joined one): its watchers follow it.
    mutating func startedFetch(_ identity: PrefetchQueue.Identity, _ identifier: UInt64) {
        guard !queued.isEmpty, let watchers = queued.removeValue(forKey: identity) else { return }
        onFetch[identifier, default: []] += watchers
    }

    /// The queued item of `identity` started (or joined) the load of handler `key`.
    mutating func startedHandler(_ identity: PrefetchQueue.Identity, _ key: ObjectKey) {
        guard !queued.isEmpty, let watchers = queued.removeValue(forKey: identity) else { return }
        onHandler[key, default: []] += watchers
    }

    /// The queued item of `identity` ended before starting anything (skipped, or cancelled).
    mutating func settleQueued(_ identity: PrefetchQueue.Identity, _ outcome: PrefetchOutcome) {
        guard !queued.isEmpty else { return }
        for watcher in queued.removeValue(forKey: identity) ?? [] { watcher.batch.record(outcome, at: watcher.index) }
    }

    /// Settles every queued item whose data key matches (removed from the queue).
    mutating func settleQueued(where matches: (String) -> Bool, _ outcome: PrefetchOutcome) {
        guard !queued.isEmpty else { return }
        for identity in queued.keys where matches(identity.dataKey) { settleQueued(identity, outcome) }
    }

    mutating func settleFetch(_ identifier: UInt64, _ outcome: PrefetchOutcome) {
        guard !onFetch.isEmpty else { return }
        for watcher in onFetch.removeValue(forKey: identifier) ?? [] { watcher.batch.record(outcome, at: watcher.index) }
    }

    mutating func settleHandler(_ key: ObjectKey, _ outcome: PrefetchOutcome) {
        guard !onHandler.isEmpty else { return }
        for watcher in onHandler.removeValue(forKey: key) ?? [] { watcher.batch.record(outcome, at: watcher.index) }
    }

    /// Settles everything watched (the manager cancels everything, or goes away).
    mutating func settleAll(_ outcome: PrefetchOutcome) {
        let all = Array(queued.values.joined()) + Array(onFetch.values.joined()) + Array(onHandler.values.joined())
        queued = [:]
        onFetch = [:]
        onHandler = [:]
        for watcher in all { watcher.batch.record(outcome, at: watcher.index) }
    }
}
