import Foundation

/// The rest of a cache's opening, done after `init` has returned: replaying the journal into
/// an index (the decoding, which needs nothing but the snapshot), then installing it (under the
/// store's mutex, with what needs the index: the session, the hits served meanwhile, the limits).
/// See `CacheStore+Opening`.
///
/// Exactly one thread decodes: the background thread started by `init`, or the first operation
/// that needs the index before that thread got to it (`claim()`). Exactly one thread installs the
/// result (`takeDecoded()`); every other one waits (`waitUntilFinished()`). The background thread
/// never holds its cache (only the cache's `state`), so releasing the cache closes it at
/// once (its `deinit` finishes the opening first).
final class OpeningReplay: @unchecked Sendable {
    // Safe to be Sendable: `snapshot`, `limits` and `listing` (itself Sendable) are immutable;
    // `phase` and `pauseHooks` are only read or written between `condition.lock()` and
    // `condition.unlock()`.

    /// What the decoding produced.
    struct Decoded: Sendable {
        var index: CacheIndex
        var highestSession: UInt32
        var generation: UInt64
        var outcome: StoreState.ReplayOutcome
    }

    private enum Phase {
        case pending
        case decoding
        case decoded(Decoded)
        case installing
        case finished
    }

    /// The journal as it was at the opening.
    let snapshot: JournalSnapshot
    /// The limits the replayed index is built for.
    let limits: CacheLimits
    /// When an instance crashed since the directory was last in use, the listing of `ready/` the
    /// install makes index and files agree with (`StoreState._reconcileAfterCrash(listing:)`), as
    /// a synchronous opening would; taken while the journal is replayed.
    let listing: ReadyListing.InProgress?
    /// Whether the install reconciles after a crash.
    var reconcilesCrash: Bool { listing != nil }
    private let condition = NSCondition()
    private var phase = Phase.pending
    /// For the tests: what runs where an opening's thread reaches a point (`pause(at:with:)`).
    private var pauseHooks: [PausePoint: @Sendable () -> Void] = [:]

    init(snapshot: JournalSnapshot, limits: CacheLimits, reconcilingCrashIn layout: CacheLayout?) {
        self.snapshot = snapshot
        self.limits = limits
        listing = layout.map(ReadyListing.InProgress.init)
    }

    /// Whether the caller is the one to decode (true exactly once).
    func claim() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard case .pending = phase else { return false }
        phase = .decoding
        return true
    }

    /// The decoder hands its result over.
    func publish(_ decoded: Decoded) {
        condition.lock()
        phase = .decoded(decoded)
        condition.broadcast()
        condition.unlock()
    }

    /// The decoded result, to install (the caller then calls `markFinished()`), once the decoding
    /// has finished; nil when another thread has taken it (`waiting: false`: also while the
    /// decoding still runs).
    func takeDecoded(waiting: Bool = true) -> Decoded? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch phase {
            case .decoded(let decoded):
                phase = .installing  // the result now lives only in `decoded`: installing it copies nothing
                return decoded
            case .pending, .decoding:
                guard waiting else { return nil }
                condition.wait()
            case .installing, .finished:
                return nil
            }
        }
    }

    /// Where the tests can hold an opening's thread (`pause(at:with:)`).
    enum PausePoint: Hashable {
        /// The background thread has taken the decoded result (and, after a crash, listed
        /// `ready/`) and not installed it: a test can release the cache, or let another instance
        /// commit, in that window.
        case beforeBackgroundInstall
        /// The thread that works off an excess over the limits the install found has not taken
        /// its first step: a test can look at the cache in between.
        case beforeWorkingOffExcess
    }

    /// For the tests: makes the thread that reaches `point` run `hook` there.
    func pause(at point: PausePoint, with hook: @escaping @Sendable () -> Void) {
        condition.lock()
        pauseHooks[point] = hook
        condition.unlock()
    }

    /// Runs the hook set for `point` by `pause(at:with:)`, if any.
    func reached(_ point: PausePoint) {
        condition.lock()
        let hook = pauseHooks[point]
        condition.unlock()
        hook?()
    }

    /// The installer is done.
    func markFinished() {
        condition.lock()
        phase = .finished
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until the index is installed.
    func waitUntilFinished() {
        condition.lock()
        while true {
            if case .finished = phase { break }
            condition.wait()
        }
        condition.unlock()
    }

    /// Replays the snapshot into a new index (no shared state: any thread, no lock).
    func decode(layout: CacheLayout) -> Decoded {
        var scratch = StoreState(layout: layout, limits: limits)
        let outcome = scratch._replay(snapshot.bytes)
        return Decoded(
            index: scratch.index, highestSession: scratch.highestSession, generation: scratch.journalGeneration, outcome: outcome)
    }
}
