/// One handler per object key: HJCache's `HJMOHandler`, as a state machine. Every phase change
/// is one of the named transitions below; nothing outside this file assigns `phase`, and the
/// users, the request and the policy change only through the mutators under *Users, request and
/// policy*.
///
/// ```
///                 startLoading ─────────────────────────┐
///   ┌─────┐  ──────────────────▶ ┌─────────┐ bytesArrived ▼ ┌────────┐ finishDecoding ┌───────┐
///   │ new │                      │ loading │ ─────────────▶ │ loaded │ ─────────────▶ │ ready │
///   └─────┘  ─startFileLookup──────────────────────────────▶ └────────┘  (no user:new) └───────┘
///     ▲  ▲          │ cancel (buffer push-out, last user gone, prefetch cancelled)  │   │
///     │  └──────────┴──────────────────────────────────────────────────────────────┘   │
///     │ prepareRestart (stale object, revalidate in the foreground)                    │
///     │                                                                                │
///     │   fail (load or decode failed) ──▶ ┌────────┐ ── startLoading / startFileLookup  │
///     └─────────────────────────────────── │ failed │   (a user manages it again)        │
///                                          └────────┘                                  │
///   ready ── startBackgroundRevalidation ──▶ ready (stale, revalidating) ── bytesArrived ┘
///         ── revalidated (304, or stale-if-error) ──▶ ready ; becomeReady (memory hit) ──▶ ready
///   any ── startStoring (the app stores an object) ──▶ loaded ── finishDecoding ──▶ ready / new
///   ready ── becomeIdle (its last user left; the memory cache holds the object) ──▶ new
/// ```
///
/// `generation` changes on every start and cancellation, so the result of an abandoned load or
/// file lookup is recognised and ignored.
///
/// A class, so the table holds references and every change happens in place: handlers are
/// touched on every `manage`, and copying a record of this size in and out of the dictionary cost
/// more than the rest of a memory hit. Not `Sendable`: handlers live in `ManagerState` and are
/// only read or changed under the manager's lock, so every method here assumes that lock is held.
final class ObjectHandler {
    /// Where the handler is in its life; see the diagram on `ObjectHandler`.
    enum Phase {
        /// Nothing under way (never started, or cancelled: managing a user restarts it).
        case new
        /// Waiting for the bytes of fetch `fetch`.
        case loading(fetch: UInt64)
        /// The bytes are here and being decoded, or being looked up in the file cache.
        case loaded
        /// The shared object, as the memory-cache value made of it (a reference: the phase is
        /// read on every `manage`, and an existential payload was copied through the runtime's
        /// value witnesses each time).
        case ready(CachedObject, DataOrigin)
        /// The last load failed; managing a user retries (subject to the failure memory).
        case failed(ManagedCacheError)

        var isBusy: Bool {
            switch self {
            case .loading, .loaded: return true
            default: return false
            }
        }

        var isLoading: Bool {
            if case .loading = self { return true }
            return false
        }

        var isLoaded: Bool {
            if case .loaded = self { return true }
            return false
        }
    }

    // `@exclusivity(unchecked)` on the state below: no runtime exclusivity check, which cost
    // a thread-local access-set insertion and removal on every access (a tenth of a memory hit's
    // instructions, `manage-hit`). Why the check could never fire: every access happens under
    // the manager's lock (so never from two threads), only this file's methods write the state
    // (`private(set)`), and each write is a whole assignment or a mutation of `users` whose
    // closures read the attachments and nothing of the handler, so no access begins while
    // another to the same property is under way.
    let key: ObjectKey
    let decoder: AnyObjectDecoder
    /// The request and policy of the user that started the current load.
    @exclusivity(unchecked) private(set) var request: ObjectRequest
    @exclusivity(unchecked) private(set) var policy: LoadPolicy
    /// The users attached to the handler's current object or load, in the order they came.
    @exclusivity(unchecked) private(set) var users = HandlerUsers()
    @exclusivity(unchecked) private(set) var phase: Phase = .new
    /// Bumped on every start and cancellation, so results of an abandoned load are ignored.
    @exclusivity(unchecked) private(set) var generation: UInt64 = 0
    /// A prefetch with this handler's decoder wants the object even with no users.
    @exclusivity(unchecked) private(set) var heldByPrefetch = false
    /// The priority of that prefetch.
    @exclusivity(unchecked) private(set) var prefetchPriority = LoadPriority.low
    /// A stale object whose revalidation is under way: a `304` makes it current again.
    @exclusivity(unchecked) private(set) var staleObject: CachedObject?
    /// The fetch revalidating a ready object in the background (stale-while-revalidate).
    @exclusivity(unchecked) private(set) var revalidatingFetch: UInt64?
    /// The ready object's memory-cache cost, kept so re-inserting it costs what decoding said.
    @exclusivity(unchecked) private(set) var objectCost = 0
    /// Guards the variant the current decode writes to the file cache: a stored object that
    /// supersedes the load closes it (`WriteGate`). `nil` when the decoder stores no variant.
    @exclusivity(unchecked) private(set) var writeGate: WriteGate?

    init(key: ObjectKey, decoder: AnyObjectDecoder, request: ObjectRequest, policy: LoadPolicy) {
        self.key = key
        self.decoder = decoder
        self.request = request
        self.policy = policy
    }

    // MARK: - Transitions

    /// new, failed or loaded (a file-cache miss) → loading: waits for the bytes of `fetch`.
    func startLoading(fetch: UInt64) {
        assert(!phase.isLoading, "a handler starts loading only when it is not already loading")
        generation &+= 1
        phase = .loading(fetch: fetch)
    }

    /// new or failed → loading, for a prefetch with `priority` (no user needs to be attached).
    func startPrefetch(fetch: UInt64, priority: LoadPriority) {
        heldByPrefetch = true
        prefetchPriority = priority
        startLoading(fetch: fetch)
    }

    /// new or failed → loaded: the file cache is read first (on the caller's thread or in the
    /// background); a miss then starts loading. Returns the generation the lookup belongs to.
    func startFileLookup() -> UInt64 {
        assert(!phase.isBusy, "a file lookup starts only when nothing is under way")
        generation &+= 1
        phase = .loaded
        return generation
    }

    /// loading or loaded → new: the load was cancelled (pushed out of the loading buffer, its last
    /// user gone, its prefetch cancelled). Managing a user restarts it.
    func cancel() {
        assert(phase.isBusy, "only a load under way can be cancelled")
        phase = .new
        generation &+= 1
        heldByPrefetch = false
    }

    /// → new, keeping `stale` to revalidate in the foreground with the request and policy of the
    /// user asking now (users wait for the answer).
    func prepareRestart(stale: CachedObject, request: ObjectRequest, policy: LoadPolicy) {
        assert(!phase.isBusy, "a restart for revalidation needs an idle handler")
        staleObject = stale
        self.request = request
        self.policy = policy
        phase = .new
    }

    /// → new, forgetting the stale object: a `304` came for bytes this decoder never had, so the
    /// load starts again without validators.
    func dropStaleObjectForFullLoad() {
        phase = .new
        staleObject = nil
        revalidatingFetch = nil
    }

    /// ready → ready (stale, revalidating): users get `stale` now while `fetch` revalidates it.
    func startBackgroundRevalidation(stale: CachedObject, fetch: UInt64) {
        assert(!phase.isBusy && revalidatingFetch == nil, "one background revalidation at a time, on an idle handler")
        phase = .ready(stale, .memory)
        objectCost = stale.cost
        staleObject = stale
        revalidatingFetch = fetch
    }

    /// any phase → loaded, for an object the app stores (`LoadCore._storeObject`, `_startStoring`):
    /// whatever was under way is abandoned (a new generation, so its results are ignored; the
    /// caller has taken the handler off its fetches and closed `writeGate`), and the handler waits
    /// for the stored object (`finishDecoding`). Returns the generation the store belongs to.
    func startStoring() -> UInt64 {
        generation &+= 1
        heldByPrefetch = false
        staleObject = nil
        revalidatingFetch = nil
        writeGate = nil
        phase = .loaded
        return generation
    }

    /// A new gate for the variant the coming decode writes (see `writeGate`).
    func openWriteGate() -> WriteGate {
        let gate = WriteGate()
        writeGate = gate
        return gate
    }

    /// loading (or ready, revalidating) → loaded: the bytes are here; the decode runs next.
    func bytesArrived() {
        assert(phase.isLoading || revalidatingFetch != nil, "bytes arrive only for a load or a revalidation")
        phase = .loaded
        revalidatingFetch = nil
    }

    /// loaded → ready with the decoded object, as the memory-cache value made of it (or → new
    /// when no user is left: only the memory cache keeps it).
    func finishDecoding(_ decoded: CachedObject, origin: DataOrigin) {
        assert(phase.isLoaded, "a decode finishes a loaded handler")
        heldByPrefetch = false
        staleObject = nil
        objectCost = decoded.cost
        compactUsers()
        phase = users.isEmpty ? .new : .ready(decoded, origin)
    }

    /// → ready with `object` again: a `304` confirmed the stale object (`origin` `.revalidated`),
    /// or the network failed and the stale object is better than nothing (stale-if-error, `.memory`).
    func revalidated(_ current: CachedObject, origin: DataOrigin) {
        phase = .ready(current, origin)
        staleObject = nil
        revalidatingFetch = nil
        compactUsers()
    }

    /// A background revalidation failed: the ready object stays as it is.
    func endBackgroundRevalidation() {
        revalidatingFetch = nil
        staleObject = nil
    }

    /// → failed: the load or the decode failed; users are told.
    func fail(_ error: ManagedCacheError) {
        phase = .failed(error)
        heldByPrefetch = false
        staleObject = nil
        revalidatingFetch = nil
        compactUsers()
    }

    /// new, failed or ready → ready with an object from the memory cache (a memory hit), unless a
    /// load or a revalidation is under way.
    func becomeReady(fromMemory cached: CachedObject) {
        guard !phase.isBusy, revalidatingFetch == nil else { return }
        phase = .ready(cached, .memory)
        objectCost = cached.cost
    }

    /// The memory-cache value the ready object came from (a memory hit) or went into (after a
    /// decode, a store or a revalidation); `nil` unless ready. The memory cache may have evicted
    /// or replaced it since: `LoadCore._idleIfTheMemoryCacheHoldsItsObject` checks.
    var readyEntry: CachedObject? {
        guard case .ready(let entry, _) = phase else { return nil }
        return entry
    }

    /// ready → new, holding nothing: its last user has left and the memory cache holds the ready
    /// object itself, so the handler stays in the table for the key's next memory hit rather
    /// than being dropped and made again (see `LoadCore._idleIfTheMemoryCacheHoldsItsObject`).
    func becomeIdle() {
        assert(
            users.isEmpty && !phase.isBusy && !heldByPrefetch && revalidatingFetch == nil && staleObject == nil,
            "only a handler nobody needs idles")
        // The ready object's cost stays: meaningless in `new`, and the next memory hit sets it.
        // (Its freshness is the ready value's own, read from the phase: copying it into the
        // handler on every hit was a twenty-fifth of a hit's instructions.)
        phase = .new
    }

    /// Whether the handler holds nothing and waits for nothing (new, with no stale object).
    var isIdle: Bool {
        guard case .new = phase else { return false }
        return staleObject == nil && revalidatingFetch == nil && !heldByPrefetch
    }

    /// The prefetch holding the handler now runs at `priority` (the same request prefetched again).
    func reprioritizePrefetch(_ priority: LoadPriority) {
        assert(heldByPrefetch, "only a prefetch's priority changes here")
        prefetchPriority = priority
    }

    /// The prefetch no longer holds the handler (its load goes on only for users).
    func releasePrefetch() {
        heldByPrefetch = false
    }

    // MARK: - Users, request and policy

    /// Lists `record` as a user of the handler (a `manage` attached it).
    func attach(_ record: Attachment) {
        users.append(record)
    }

    /// Takes `record` off the list: it was detached, or its request was answered on its own (a
    /// memory hit, a remembered failure). `withReleased`: users deallocated meanwhile go too.
    func detach(_ record: Attachment, withReleased: Bool = false) {
        users.removeAll { $0 === record || (withReleased && !$0.isAlive) }
    }

    /// Takes every user off the list: their requests are over (a failure or a cancellation told
    /// them), so a later load of the key, another user's retry, is not theirs to hear.
    func endUsersRequests() {
        users.removeAll()
    }

    /// The next load runs with `request` and `policy` (those of the user or prefetch starting it).
    func adopt(request: ObjectRequest, policy: LoadPolicy) {
        self.request = request
        self.policy = policy
    }

    // MARK: - Questions

    /// Whether this handler waits for fetch `identifier` (loading, or revalidating in the background).
    func isWaiting(for identifier: UInt64) -> Bool {
        if case .loading(identifier) = phase { return true }
        return revalidatingFetch == identifier
    }

    /// The ready object when its freshness has run out under `policy`, as a stale object to
    /// revalidate; `nil` otherwise.
    func staleReadyObject(policy: FreshnessPolicy) -> CachedObject? {
        guard case .ready(let entry, _) = phase, let freshness = entry.freshness, freshness.isStale(policy: policy) else { return nil }
        return CachedObject(object: entry.object, freshness: freshness, cost: objectCost)
    }

    /// Whether any user is still alive.
    var hasLiveUsers: Bool { users.contains { $0.isAlive } }

    /// Whether a live user keeps the load out of the loading buffer's reach.
    var hasLiveUnevictableUsers: Bool { users.contains { $0.isAlive && !$0.evictable } }

    /// The highest priority among the live users' requests and the prefetch holding the handler;
    /// `nil` when nothing wants it (a load whose users just left).
    var wantedPriority: LoadPriority? {
        var highest: LoadPriority? = heldByPrefetch ? prefetchPriority : nil
        for slot in users where slot.isAlive {
            let priority = slot.request.priority
            if highest.map({ priority > $0 }) ?? true { highest = priority }
        }
        return highest
    }

    /// `wantedPriority`, or `.normal` when nothing wants the handler (its place in the loading buffer).
    var effectivePriority: LoadPriority { wantedPriority ?? .normal }

    /// Drops the slots of deallocated users.
    func compactUsers() { users.removeAll { !$0.isAlive } }

    /// Appends the objects this handler holds (its ready object, a stale one) to `released`, for
    /// a caller that drops the handler under the lock to release them after it
    /// (`PendingWork.released`): freeing a decoded image nobody else holds can take far longer
    /// than the lock should be held.
    func releaseHeldObjects(into released: inout [any Sendable]) {
        if case .ready(let entry, _) = phase { released.append(entry) }
        if let staleObject { released.append(staleObject.object) }
    }

    /// One delivery of `event` to each live user (of those `including` accepts), each for the
    /// request it is attached with. `fetch`: for progress and previews, the fetch they report on
    /// (see `PendingDelivery.fetch`).
    func deliveries(
        of event: UserEvent, fetch: UInt64? = nil, including: (Attachment) -> Bool = { _ in true }
    ) -> [PendingDelivery] {
        let isFinal: Bool
        switch event {
        case .ready, .failed: isFinal = true
        case .progress, .preview: isFinal = false
        }
        return users.compactMap { slot in
            guard including(slot), slot.isAlive else { return nil }
            // Progress and previews decided before this are dropped (`AttachmentCurrency`).
            if isFinal { slot.currency.finalCallbackDecided(for: slot.attachment) }
            return PendingDelivery(to: slot, key: key, event: event, fetch: fetch)
        }
    }
}
