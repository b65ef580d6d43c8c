import Foundation
import ManagedCacheLocking

/// Loads objects from URLs, shares one decoded object among all the users of a key, and caches it
/// in memory and (optionally) in files. HJCache's `HJObjManager`, callable from any thread or task.
///
/// - A **bounded FIFO of active loads** (the loading buffer, default 12): when a new load pushes the
///   oldest still-loading one out, that load is cancelled and its users are told, so a fast scroll
///   through a long table only loads what is on screen when it stops.
/// - **One handler per key** (`ObjectKey`: the request's oid or URL, plus the decoder): one download
///   and one decode, however many users ask at once; the same object instance reaches every user.
/// - A **memory cache** of decoded objects, LRU, bounded by count (default 20) and bytes (default 64 MiB).
/// - An optional **file cache** (`FileCaching`: `FileCache`, `BigFileCache` or your own).
///
/// ```swift
/// // Assumes `url` (a URL).
/// let manager = ObjectManager()
/// let user = ObjectUser(decoder: DataDecoder()) { data, _ in print(data.count) }
/// user.request = ObjectRequest(url: url)
/// manager.manage(user)
/// ```
///
/// Several managers can coexist, each with its own caches. Deallocating a manager cancels its
/// loads; their users are told `.cancelled(.managerShutDown)`.
public final class ObjectManager: Sendable {
    /// The decoded objects this manager keeps in memory, by key.
    public let memoryCache: MemoryCache<ObjectKey, CachedObject>
    /// The file cache, if any.
    public let fileCache: (any FileCaching)?

    let configuration: Configuration
    let undecodedData: MemoryCache<String, Data>
    let state: ManagerLock
    /// The currencies of the users' records, the same object as `ManagerState.currencies`,
    /// reachable here without the lock (see `AttachmentCurrencies`).
    let currencies: AttachmentCurrencies
    /// The data keys the failure memory may refuse, the same object as `FailureMemory.hints`,
    /// reachable here without the lock (see `RefusalHints`).
    let refusalHints = RefusalHints()
    /// Decides what each call and each load's event means, under `state`'s lock (see `LoadCore`).
    let core: LoadCore
    /// Carries out what the core decides, after the lock.
    let performer: WorkPerformer
    /// Reads the file cache where the core decided to look.
    let fileCacheReader: FileCacheReader
    /// Counts a file-cache failure or corrupt entry a load or a file-cache read reports, then
    /// hands the event to the app's handler (`Configuration.eventHandler`).
    let report: @Sendable (ManagerEvent) -> Void
    /// The counters that loads bump from their own threads, with nothing else to decide: behind
    /// a lock of their own, so that counting a request sent, a chunk received or a file-cache error
    /// never waits for (or holds up) the lock every `manage` takes (counting each request
    /// sent under it took a third of all that lock's waits in the `manage-latency` benchmark).
    let transferCounters = Lock(TransferCounters())
    /// Paces the loads sent to the loader (``Configuration/loadRateLimit``); `nil`: no limit.
    let loadRateLimiter: LoadRateLimiter?
    /// The subscription to the system's memory signals (`MemoryPressure`); ends when the manager
    /// goes away. In a lock only because it is set once `self` exists, at the end of `init`.
    private let memoryWarningObservation = Lock<MemoryPressureSubscription?>(nil)

    /// Creates a manager with its own caches.
    ///
    /// - Parameter configuration: The buffer and cache sizes, the file cache, the loader and the
    ///   policy. Default: every field's default (see ``Configuration``).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.fileCache = configuration.fileCache
        self.memoryCache = MemoryCache(
            countLimit: configuration.memoryCacheCountLimit, costLimit: configuration.memoryCacheCostLimit,
            eviction: configuration.memoryCacheEviction)
        self.undecodedData = MemoryCache(countLimit: 1 << 20, costLimit: configuration.undecodedDataLimit)
        self.currencies = AttachmentCurrencies()
        self.loadRateLimiter = configuration.loadRateLimit.map { LoadRateLimiter($0) }
        self.state = ManagerLock(
            ManagerState(
                loadingBufferSize: configuration.loadingBufferSize, pushOut: configuration.loadingBufferPushOut,
                currencies: currencies, refusalHints: refusalHints))
        self.core = LoadCore(
            memoryCache: memoryCache, undecodedData: undecodedData, configuration: configuration,
            hasFileCache: configuration.fileCache != nil, fetchRunner: FetchRunner())
        self.performer = WorkPerformer(state: state, core: core)
        self.report = TransferCounters.reporter(counting: transferCounters, then: configuration.eventHandler)
        self.fileCacheReader = FileCacheReader(
            state: state, core: core, performer: performer, report: report)
        core.fetchRunner.attach(self)
        observeMemoryWarnings()
    }

    /// Creates a manager with HJCache's two sizes: `initWithLoadingBufferSize:memCacheSize:`.
    ///
    /// - Parameters:
    ///   - loadingBufferSize: How many user loads run before the oldest is cancelled (HJCache: 12).
    ///   - memoryCacheSize: How many decoded objects the memory cache keeps (HJCache: 20).
    ///   - fileCache: Where bytes are kept between runs. Default `nil`: none.
    public convenience init(loadingBufferSize: Int, memoryCacheSize: Int, fileCache: (any FileCaching)? = nil) {
        var configuration = Configuration()
        configuration.loadingBufferSize = loadingBufferSize
        configuration.memoryCacheCountLimit = memoryCacheSize
        configuration.fileCache = fileCache
        self.init(configuration: configuration)
    }

    /// Cancels every load and tells the users still waiting for one `.cancelled(.managerShutDown)`
    /// (an event stream being iterated ends with it), as its `callbackDelivery` says. There is no
    /// currency check: with the manager gone, nothing can re-manage them with it any more.
    deinit {
        let decision = decide(.shutDown)
        let (tasks, deliveries) = (decision.tasksToCancel, decision.unconditionalDeliveries)
        for task in tasks { task.cancel() }
        for delivery in deliveries {
            switch delivery.user.delivery {
            case .immediate:
                delivery.user.deliver(delivery.event, request: delivery.request)
            case .mainQueue:
                DispatchQueue.main.async { delivery.user.deliver(delivery.event, request: delivery.request) }
            }
        }
    }

    /// A shared manager with the default configuration, for apps that need only one.
    public static let shared = ObjectManager()

    /// The policy requests start from.
    public var policy: LoadPolicy { configuration.policy }

    /// The loading buffer's capacity. Lowering it cancels the oldest loads that no longer fit.
    public var loadingBufferSize: Int {
        get { state.withLock { $0.loadingBuffer.capacity } }
        set {
            let work = decide(.loadingBufferResized(newValue)).work
            performer.perform(work)
        }
    }

    /// The counters since creation or the last `resetStatistics()`.
    ///
    /// The counters that loads bump from their own threads (``ManagerStatistics/networkRequests``,
    /// ``ManagerStatistics/revalidations``, ``ManagerStatistics/bytesDownloaded``,
    /// ``ManagerStatistics/fileCacheErrors``) are kept apart from the rest, so that counting them
    /// never holds up `manage`, and read a moment after them: while loads run, the two halves of
    /// one snapshot may be a few events apart.
    public var statistics: ManagerStatistics {
        var statistics = state.withLock { $0.statistics }
        transferCounters.withLock { $0.add(to: &statistics) }
        return statistics
    }

    /// Sets every counter back to zero.
    public func resetStatistics() {
        state.withLock { $0.statistics = ManagerStatistics() }
        transferCounters.withLock { $0 = TransferCounters() }
    }

    /// How many times the manager's lock has been taken since it was made (for the benchmark
    /// program, which prints the sections each kind of call takes).
    package var lockSectionCount: UInt64 { state.sectionCount }

    /// How many loads are running now (user loads and prefetches).
    public var activeLoadCount: Int { state.withLock { $0.fetches.count } }

    /// Fetch tasks not yet finished, cancelled ones included (for the reliability tests: when it
    /// is 0, no transfer of this manager can start any more).
    var runningFetchTaskCount: Int { core.fetchRunner.running.withLock { $0 } }

    /// The keys in the loading buffer, oldest first (for tests and diagnostics).
    @available(*, deprecated, message: "for tests and diagnostics only; it leaves the public API in a later release")
    public var loadingBufferKeys: [ObjectKey] { bufferedLoadKeys }

    /// The keys in the loading buffer, oldest first (for tests and diagnostics).
    package var bufferedLoadKeys: [ObjectKey] { state.withLock { $0.loadingBuffer.keys } }

    // MARK: - Caches

    /// The object for `request` and `decoder` if it is in memory now (memory cache or a live
    /// handler), without loading anything: JMImageCache's "return the image now if cached".
    ///
    /// - Parameters:
    ///   - request: The request whose key to look up.
    ///   - decoder: The decoder whose object to look up.
    /// - Returns: The shared object, or `nil` when it is not in memory.
    public func cachedObject<Decoder: ObjectDecoding>(for request: ObjectRequest, decoder: Decoder) -> Decoder.Object? {
        let key = request.objectKey(variant: decoder.identifier)
        if let object = memoryCache.value(forKey: key)?.object as? Decoder.Object { return object }
        return state.withLock { state in
            if case .ready(let entry, _) = state.handlers[key]?.phase { return entry.object as? Decoder.Object }
            return nil
        }
    }

    /// Removes the decoded object for `request` and `decoder` from the memory cache (users still
    /// holding it keep it).
    ///
    /// - Parameters:
    ///   - request: The request whose object to remove.
    ///   - decoder: The decoder whose object to remove; other decoders' objects of the same bytes stay.
    ///   - fromFileCache: Whether to delete the bytes from the file cache too. Default `false`.
    public func removeObject<Decoder: ObjectDecoding>(for request: ObjectRequest, decoder: Decoder, fromFileCache: Bool = false) {
        let key = request.objectKey(variant: decoder.identifier)
        memoryCache.removeValue(forKey: key)
        _ = decide(.objectRemoved(key))
        undecodedData.removeValue(forKey: key.dataKey)
        if fromFileCache { fileCache?.removeEntry(forKey: key.dataKey) }
    }

    /// Empties the memory cache (and undecoded bytes). Objects users hold stay with them.
    public func removeAllObjects() {
        memoryCache.removeAll()
        undecodedData.removeAll()
        // The dropped handlers, and the objects only they held, are freed after the lock.
        performer.perform(decide(.memoryEmptied).work)
    }

    /// Empties the memory cache and the file cache: HJCache's `emptyCache`.
    public func removeAllCaches() {
        removeAllObjects()
        fileCache?.removeAll()
    }

    /// Frees memory now: empties the memory cache and undecoded bytes, as a critical
    /// ``MemoryPressure`` does (the system's signals call ``handleMemoryPressure(_:)``).
    public func handleMemoryPressure() {
        removeAllObjects()
    }

    /// Forgets the remembered failures of `request`'s key (download failures and decoding failures
    /// of every decoder), so the next request for it goes to the network.
    ///
    /// - Parameter request: A request of the key to retry.
    public func forgetFailure(for request: ObjectRequest) {
        state.withLock { $0.failures.forget(dataKey: request.dataKey) }
    }

    /// Forgets every remembered failure.
    public func forgetAllFailures() {
        state.withLock { $0.failures.forgetAll() }
    }

    /// Cancels every load and prefetch; their users receive `.cancelled(.managerShutDown)`.
    public func cancelAll() {
        let work = decide(.cancelAll).work
        performer.perform(work)
    }

    /// Decides `event` under the lock, at the failure memory's time read just before it
    /// (`LoadCore.decide`).
    func decide(_ event: LoadCore.Event) -> LoadCore.Decision {
        let now = configuration.failureClock()
        return state.withLock { core.decide(event, at: now, in: &$0) }
    }

    /// Calls `handleMemoryPressure(_:)` on every memory signal (`MemoryPressure`: the system's
    /// memory-pressure source, UIKit's memory warning and move to the background, or the app's own
    /// `signal()`), until the manager goes away.
    private func observeMemoryWarnings() {
        let subscription = MemoryPressureCenter.shared.subscribe { [weak self] in self?.handleMemoryPressure($0) }
        memoryWarningObservation.withLock { $0 = subscription }
    }
}

// MARK: - Managing users

extension ObjectManager {
    /// Finds or creates the handler for the user's key, attaches the user (weakly), and starts or
    /// joins the load. Callable from any thread or task.
    ///
    /// - A memory hit (or an object a live handler already shares) is delivered synchronously, on the
    ///   calling thread, before `manage` returns: no placeholder flicker. For a `.mainQueue` user
    ///   that is only when `manage` runs on the main queue; otherwise the hit goes to the main
    ///   queue like every other callback: `.mainQueue` callbacks run there, whoever calls.
    /// - A user managed again with another request is detached from the old one first and never
    ///   receives its object afterwards: once `manage` (or `unmanage`) returns, no callback for the
    ///   request it replaced reaches the user; one already running on another thread is waited
    ///   for. So a callback must not wait for a thread that may be managing the same user (an
    ///   `.immediate` callback calling `DispatchQueue.main.sync` while the main thread re-manages
    ///   it): use `.mainQueue` delivery for that.
    /// - A user whose `objectRequest` is `nil` is detached.
    /// - Each call is one request, answered by exactly one final callback: ready, or failed. A
    ///   failure or a cancellation detaches the user: it hears nothing of a later load of the key
    ///   (another user's retry) until it is managed again. A ready user stays attached, sharing
    ///   the object, and receives the newer object if a revalidation brings one.
    /// - The user's properties (`objectRequest`, `objectDecoder`, `callbackDelivery`, `wantsPreviews`) are read
    ///   here, on the calling thread, and never again until the next `manage`.
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager) and `avatarURL` (a URL).
    /// let user = ObjectUser(request: ObjectRequest(url: avatarURL), decoder: DataDecoder()) { data, origin in
    ///     print("\(data.count) bytes from \(origin)")
    /// }
    /// manager.manage(user)  // keep `user`: the manager holds it weakly
    /// ```
    ///
    /// - Parameter user: The user, held weakly: keep a strong reference for as long as it wants
    ///   the object. A main-actor type conforms to ``MainActorObjectUser`` instead, and goes to
    ///   ``manage(_:)-4he8m`` (the overload for it).
    public func manage<User: ManagedObjectUser>(_ user: User) {
        manage(user, isAwaiting: false)
    }

    /// `manage`, for a user behind an `async` call when `isAwaiting` (see `inlineFileRead`).
    func manage<User: ManagedObjectUser>(_ user: User, isAwaiting: Bool) {
        guard let request = user.objectRequest else {
            unmanage(user)
            return
        }
        let delivery = user.callbackDelivery
        let wantsPreviews = user.wantsPreviews
        let call = ManageCall(
            request: request, userID: ObjectIdentifier(user), delivery: delivery, wantsPreviews: wantsPreviews,
            isAwaiting: isAwaiting)
        manage(
            call, decoder: user.objectDecoder, link: { ThreadSafeUserLink(user, delivery: delivery, wantsPreviews: wantsPreviews) },
            deliverHit: { object, request in
                user.receiveMemoryHit(object, request: request)
            })
    }

    /// `manage` once the user's properties are read: `makeLink` makes the user's link when it
    /// needs a new one; `deliverHit` calls the user with a memory hit on this thread, when its
    /// delivery allows that here.
    ///
    /// The algorithm, one step per line (each step is a function below):
    func manage<Decoder: ObjectDecoding>(
        _ call: ManageCall, decoder: Decoder, link makeLink: @Sendable () -> any UserLink,
        deliverHit: (any Sendable, ObjectRequest) -> Void
    ) {
        let identifier = decoder.identifier
        let key = call.request.objectKey(variant: identifier)
        let policy = call.request.policy(over: configuration.policy)
        // 1. A fresh memory hit is attached and delivered at once (on this thread when allowed).
        let cached = policy.cacheInMemory ? memoryCache.value(forKey: key) : nil
        if let cached, cached.isFresh(policy: policy.freshness) {
            deliverMemoryHit(
                cached, call, key: key, policy: policy, decoder: decoder, identifier: identifier,
                link: makeLink, deliverHit: deliverHit)
            return
        }
        // 2. A request nothing can load fails at once.
        guard requestIsLoadable(call, key: key, link: makeLink) else { return }
        // 3. Whether the file cache certainly lacks the bytes, asked before the lock: then a start
        //    needs no lookup after it, and no second acquisition of the lock to start the load.
        //    Not asked for a key the failure memory may refuse: that answer needs no lookup.
        let now = configuration.failureClock()
        let knownFileMiss = fileCacheReader.isKnownMiss(
            call, key: key, policy: policy, storesVariant: decoder.storesVariant,
            mayBeRefused: refusalHints.mayRefuse(key.dataKey, now: now))
        // 4. Under the lock: attach the user, then share, join, revalidate, answer from the
        //    failure memory, or start (from the file cache or the network).
        //    Past the lock's wait budget, the section is left to the lock's holder (and the file
        //    cache, if it is next, is read in the background).
        let anyDecoder = AnyObjectDecoder(decoder, identifier: identifier)
        let decided = withoutActuallyEscaping(makeLink) { makeLink in
            state.withLock(
                waitingAtMost: configuration.manageLockWaitBudget,
                { state in
                    core.decide(
                        .manage(
                            call, key: key, policy: policy, decoder: anyDecoder, stale: cached, link: makeLink,
                            knownFileMiss: knownFileMiss, deferred: false), at: now, in: &state)
                },
                otherwise: {
                    leaveAttachAndDecide(
                        call, key: key, policy: policy, decoder: anyDecoder, stale: cached, link: makeLink(),
                        knownFileMiss: knownFileMiss)
                })
        }
        guard let decided else { return }
        // 5. Deliver what was decided, with the rest handed off this thread; then read the file
        //    cache when that is the next step.
        performer.perform(decided.result.work, synchronousUser: call.userID, handingOff: decided.starts)
        if let fileLookup = decided.result.fileLookup { fileCacheReader.read(fileLookup, key: key, synchronousUser: call.userID) }
    }

    /// Step 4 when the lock stays busy past the budget: retires the user's current attachment
    /// (nothing decided for its earlier request reaches it from now on) and returns the section
    /// to leave, which decides as step 4 does, then delivers in the background and reads the
    /// file cache there, if that is next.
    private func leaveAttachAndDecide(
        _ call: ManageCall, key: ObjectKey, policy: LoadPolicy, decoder: AnyObjectDecoder, stale: CachedObject?,
        link: any UserLink, knownFileMiss: Bool
    ) -> ManagerLock.LeftSection {
        currencies.retireCurrentAttachment(of: call.userID)
        let now = configuration.failureClock()
        return { state in
            let decision = self.core.decide(
                .manage(
                    call, key: key, policy: policy, decoder: decoder, stale: stale, link: { link }, knownFileMiss: knownFileMiss,
                    deferred: true), at: now, in: &state)
            return {
                self.performer.perform(decision.work)
                if let fileLookup = decision.fileLookup {
                    self.fileCacheReader.read(fileLookup, key: key, synchronousUser: nil, maximumBytes: nil)
                }
            }
        }
    }

    /// Step 1: attaches the user to the handler of a fresh memory hit and delivers the object:
    /// on this thread when the user's delivery allows it here (`.immediate`, or `.mainQueue` on
    /// the main queue), else through the main queue.
    private func deliverMemoryHit<Decoder: ObjectDecoding>(
        _ cached: CachedObject, _ call: ManageCall, key: ObjectKey, policy: LoadPolicy, decoder: Decoder,
        identifier: String, link makeLink: @Sendable () -> any UserLink, deliverHit: (any Sendable, ObjectRequest) -> Void
    ) {
        let onThisThread = call.delivery == .immediate || MainQueue.isCurrent
        let now = configuration.failureClock()
        var work = PendingWork()
        let attached = state.withLock(
            waitingAtMost: configuration.manageLockWaitBudget,
            { state in
                core._memoryHit(
                    call, link: makeLink, key: key, policy: policy, cached: cached,
                    decoder: AnyObjectDecoder(decoder, identifier: identifier), deferred: false, at: now, work: &work, in: &state)
            },
            otherwise: {
                leaveAttachForHit(
                    call, link: makeLink(), key: key, policy: policy, cached: cached,
                    decoder: AnyObjectDecoder(decoder, identifier: identifier), deliversHit: !onThisThread)
            })
        guard let attached else {
            // Left to the lock's holder, which attaches the user; the hit is answered now all the same.
            if onThisThread { deliverHit(cached.object, call.request) }
            return
        }
        if onThisThread {
            // Most hits have nothing else to do: no call for them (a hot path, `manage-hit`).
            if !work.isEmpty || !attached.starts.isEmpty { performer.perform(work, handingOff: attached.starts) }
            deliverHit(cached.object, call.request)
        } else {
            work.deliveries.append(PendingDelivery(to: attached.result, key: key, event: .ready(cached.object, .memory)))
            performer.perform(work, handingOff: attached.starts)
        }
    }

    /// Step 1 when the lock stays busy past the budget: retires the user's current attachment
    /// and returns the section to leave, which attaches the user as step 1 does, and delivers
    /// the hit itself when `deliversHit` (a `.mainQueue` user managed off the main queue).
    private func leaveAttachForHit(
        _ call: ManageCall, link: any UserLink, key: ObjectKey, policy: LoadPolicy, cached: CachedObject,
        decoder: AnyObjectDecoder, deliversHit: Bool
    ) -> ManagerLock.LeftSection {
        currencies.retireCurrentAttachment(of: call.userID)
        let now = configuration.failureClock()
        return { state in
            var work = PendingWork()
            let record = self.core._memoryHit(
                call, link: { link }, key: key, policy: policy, cached: cached, decoder: decoder, deferred: true, at: now,
                work: &work, in: &state)
            if deliversHit { work.deliveries.append(PendingDelivery(to: record, key: key, event: .ready(cached.object, .memory))) }
            return { self.performer.perform(work) }
        }
    }

    /// Step 2: `false` (and the user told `.invalidRequest`) for an empty key or a URL the data
    /// loader cannot load, unless the key's handler holds or is getting its object (a user with
    /// the same oid loads it, or the app is storing it: `ObjectRequest(oid:)`).
    private func requestIsLoadable(_ call: ManageCall, key: ObjectKey, link makeLink: @Sendable () -> any UserLink) -> Bool {
        guard key.dataKey.isEmpty || !configuration.dataLoader.canLoad(call.request.url) else { return true }
        let reason = key.dataKey.isEmpty ? "empty key" : "unsupported URL '\(call.request.url.absoluteString)'"
        let decision = withoutActuallyEscaping(makeLink) { makeLink in
            decide(.unloadable(call, key: key, reason: reason, link: makeLink))
        }
        guard decision.answeredAsUnloadable else { return true }
        performer.perform(decision.work, synchronousUser: call.userID)
        return false
    }

    /// Detaches `user` from whatever it was managed for: HJCache's `clear` before cell reuse.
    /// It receives no more callbacks for that request once this returns (a callback already
    /// running on another thread is waited for). If it was the last user of a load and the
    /// policy does not finish loads without users, the load is cancelled.
    ///
    /// - Parameter user: The user; nothing happens when it is not managed.
    public func unmanage<User: ManagedObjectUser>(_ user: User) {
        let work = decide(.unmanage(ObjectIdentifier(user))).work
        performer.perform(work)
    }
}

/// What `manage` read from a user, on the calling thread (with its decoder, passed beside it):
/// the manager reads nothing else of it.
struct ManageCall: Sendable {
    let request: ObjectRequest
    let userID: ObjectIdentifier
    let delivery: CallbackDelivery
    /// Whether the user wants previews.
    let wantsPreviews: Bool
    /// Whether the user is an `async` caller (see `inlineFileRead`).
    let isAwaiting: Bool
}

/// A file-cache hit read inside `manage`, on the caller's thread; entries over `maximumBytes`
/// (when set) are left to the background load.
struct InlineFileRead {
    let maximumBytes: Int?
}
