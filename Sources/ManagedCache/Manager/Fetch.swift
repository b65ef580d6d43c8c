import Foundation
import ManagedCacheLocking

// A fetch: one download per data key, shared by every handler (decoder) of the key and by
// prefetches. Its parts, all here: its record in the manager's state (`FetchRecord`, with the
// `FetchAudience` its task reads without the lock and the `WriteGate` of its commit), what its
// task is to do (`FetchPlan`), where the task will be (`FetchTaskSlot`, `FetchStart`), the task
// itself (`FetchRunner` and the stages that need the manager) and its previews (`PreviewFeed`).
//
// The task, from its creation after the lock that decided it to the section that ends it, one
// stage after another:
//
//     FetchStart.run, once the lock is released (FetchTaskSlot: never for a fetch cancelled first)
//       └▶ FetchRunner.run
//            1. the download (FetchOperation: the file cache, the rate limit, the loader, the
//               revalidation), whose reports go to the fetch's audience without the manager's
//               lock: progress to its users, each chunk to the preview sessions (PreviewFeed)
//            2. the decodes, one per handler subscribed (ObjectManager.finishFetch)
//            3. one section: the fetch ends, the objects are cached and delivered
//            4. what that section left: decodes of handlers that joined meanwhile, the variants
//               to store

/// What a fetch's task is to do, decided under the manager's lock by `LoadCore._createFetch`.
struct FetchPlan: Sendable {
    let dataKey: String
    let request: ObjectRequest
    let policy: LoadPolicy
    /// The validators of a stale object in memory, to revalidate it with.
    let validators: HTTPFreshness?
    /// The fetch's priority, which its loader reads (see `LoadCore._refreshPriority`).
    let priority: LoadPriorityCell
    /// The fetch's identifier: what it reports is ignored once another fetch has replaced it.
    let fetch: UInt64
    /// Guards the download's commit to the file cache (`FetchRecord.writeGate`).
    let writeGate: WriteGate
    /// The previews of its bytes (`FetchRecord.previews`).
    let previews: PreviewFeed
    /// Who it tells of progress and previews, and decodes for (`FetchRecord.audience`).
    let audience: FetchAudience
    /// Its downloads wait for the load rate limit's tokens (a load the loading buffer can push out).
    let paced: Bool
    /// It is for users (not a data-only prefetch): a stale entry may be served at once.
    let forUsers: Bool
}

/// Where a fetch's task will be: decided under the manager's lock, created after it.
///
/// Why: creating a task enqueues its first job on the loading executor, which may wake or start a
/// dispatch thread. On a busy 2-core machine that can take the CPU from the thread that holds the
/// lock while every `manage` waits for it. So `_createFetch` only records a
/// `FetchStart`, and `ManagerLock` creates the task once the lock is released. A fetch cancelled
/// in between (pushed out of the loading buffer by the next `manage`) never gets a task.
///
///     waiting ──start──▶ running(task) ──cancel──▶ cancelled (task cancelled)
///        └─────────────────cancel────────────────▶ cancelled (start does nothing)
final class FetchTaskSlot: Sendable {
    private enum Phase {
        case waiting
        case running(Task<Void, Never>)
        case cancelled
    }

    private let phase = Lock(Phase.waiting)

    /// Creates the task with `makeTask` unless the fetch was cancelled first. The task is made
    /// under the slot's own lock (taken by nothing but `start` and `cancel`), so a cancellation
    /// that comes meanwhile cancels it.
    func start(_ makeTask: () -> Task<Void, Never>) {
        phase.withLock { phase in
            guard case .waiting = phase else { return }
            phase = .running(makeTask())
        }
    }

    /// Whether the task was created (for the tests).
    var hasTask: Bool {
        phase.withLock { phase in
            if case .running = phase { return true }
            return false
        }
    }

    /// Cancels the task, or makes sure it is never created.
    func cancel() {
        let task = phase.withLock { phase -> Task<Void, Never>? in
            defer { phase = .cancelled }
            guard case .running(let task) = phase else { return nil }
            return task
        }
        // Outside the lock, on this thread: the task's cancellation handlers run here and close the
        // download's file at once (the descriptor bound counts on it). What could block, the
        // `URLSessionTask`'s own cancellation, is handed off by the loader
        // (`SessionDelegate.cancel(_:)` in `URLSessionDataLoader.swift`).
        task?.cancel()
    }
}

/// A fetch task to create once the manager's lock is released (`ManagerLock`).
struct FetchStart: Sendable {
    let slot: FetchTaskSlot
    /// The manager's count of fetch tasks created and not finished.
    let running: SharedLock<Int>
    let operation: @Sendable () async -> Void

    /// Creates the task on the loading executor, unless the fetch was cancelled already.
    func run() {
        let (running, operation) = (self.running, self.operation)
        slot.start {
            running.withLock { $0 += 1 }
            return LoadingTask.start {
                defer { running.withLock { $0 -= 1 } }
                await operation()
            }
        }
    }
}

/// Runs the fetch tasks the core decides to start, for the manager that owns it. The manager is
/// held weakly and asked for at each step, so a running fetch never keeps it alive: deallocating a
/// manager cancels its fetches (`ObjectManager.deinit`).
final class FetchRunner: Sendable {
    /// Fetch tasks created and not yet finished (`ObjectManager.runningFetchTaskCount`). Not
    /// `activeLoadCount`: a cancelled fetch leaves the manager's state at once, while its task (and
    /// its transfer, which may not even have started) ends a moment later. A lock of its own:
    /// counted from tasks that may outlive the manager.
    let running = SharedLock(0)
    private let owner = Lock(WeakOwner())

    private struct WeakOwner {
        weak var manager: ObjectManager?
    }

    /// The manager, once it exists: set at the end of its `init`, before any fetch can start.
    func attach(_ manager: ObjectManager) {
        owner.withLock { $0.manager = manager }
    }

    private var manager: ObjectManager? { owner.withLock { $0.manager } }

    /// The fetch's task: the download; its end, with the decodes for the handlers of the data key
    /// (delivered in the section that ends the fetch); the decodes that end leaves (each delivered
    /// in its own); then the variants of what the end delivered.
    func run(_ plan: FetchPlan) async {
        guard let operation = manager?.makeFetchOperation(plan) else { return }
        let result = await operation.run()
        guard let end = manager?.finishFetch(plan, result: result) else { return }
        for job in end.decodes {
            manager?.decodeFetched(job)
        }
        for (job, object, policy) in end.variants {
            manager?.fileCacheReader.storeVariantIfNeeded(job, object: object, policy: policy)
        }
    }
}

extension ObjectManager {
    // MARK: - The stages that need the manager

    /// The download of a fetch, made in its task (`FetchRunner`).
    func makeFetchOperation(_ plan: FetchPlan) -> FetchOperation {
        var operation = FetchOperation(
            dataKey: plan.dataKey, request: plan.request, policy: plan.policy, loader: configuration.dataLoader,
            fileCache: fileCache, undecoded: undecodedData, inMemoryThreshold: configuration.inMemoryThreshold,
            memoryValidators: plan.validators, priority: plan.priority,
            callbacks: makeFetchCallbacks(plan), writeGate: plan.writeGate,
            rateLimiter: plan.paced ? loadRateLimiter : nil)
        operation.mayServeStaleAtOnce = plan.forUsers
        return operation
    }

    /// Decodes bytes a fetch brought for one handler, in the fetch's task: delivers first (the
    /// users are waiting), then stores the variant. A file-cache entry removed by another instance
    /// between the read and the decode is a miss: the key loads again.
    func decodeFetched(_ job: DecodeJob) {
        let outcome = job.decoder.decode(job.data)
        if case .failure = outcome, job.origin == .fileCache, job.data.fileCacheEntryVanished {
            fileCache?.removeEntry(forKey: job.key.dataKey)
            performer.loadAfterUnusableFileCacheEntry(job)
            return
        }
        performer.completeDecode(job, outcome: outcome)
        if case .success(let object) = outcome { fileCacheReader.storeVariantIfNeeded(job, object: object) }
    }

    // MARK: - Fetch callbacks (from the fetch's task)

    private func makeFetchCallbacks(_ plan: FetchPlan) -> FetchCallbacks {
        let (dataKey, identifier, previews, audience) = (plan.dataKey, plan.fetch, plan.previews, plan.audience)
        return FetchCallbacks(
            progress: { [weak self] progress, newBytes in
                self?.fetchProgressed(dataKey: dataKey, fetch: identifier, audience: audience, progress: progress, newBytes: newBytes)
            },
            requestSent: { [weak self] conditional in
                self?.transferCounters.withLock { counters in
                    counters.networkRequests += 1
                    if conditional { counters.revalidations += 1 }
                }
            },
            event: { [weak self] event in
                self?.report(event)
            },
            bytes: { [weak self] chunk, offset in
                self?.previewBytesArrived(chunk, offset: offset, feed: previews, audience: audience)
            })
    }

    /// Tells the fetch's users of `progress` from its audience, without the manager's lock; asks
    /// the manager only when a user of a load that may be cancelled without users was released.
    private func fetchProgressed(
        dataKey: String, fetch identifier: UInt64, audience: FetchAudience, progress: LoadProgress, newBytes: Int
    ) {
        transferCounters.withLock { $0.bytesDownloaded += newBytes }
        let (deliveries, usersReleased) = audience.progressed(progress)
        if !deliveries.isEmpty {
            var work = PendingWork()
            work.deliveries = deliveries
            performer.perform(work)
        }
        if usersReleased { performer.perform(decide(.fetchUsersReleased(dataKey: dataKey, fetch: identifier)).work) }
    }

    /// Ends a fetch, on its task: decodes its bytes for each handler subscribed to it, then
    /// records the end and the objects in one section, and delivers them. Returns what is left
    /// to do on the task: decodes for handlers that joined meanwhile (or whose bytes it could
    /// not decode before: a file-cache entry that vanished), and the variants to store.
    func finishFetch(_ plan: FetchPlan, result: Result<FetchedData, ManagedCacheError>) -> LoadCore.FetchEnd {
        var decoded: [ObjectKey: Result<any Sendable, ManagedCacheError>] = [:]
        // Bytes every subscriber decodes: not a `304` (a stale object may be confirmed instead),
        // nor a stale copy shown after a failure (the object in memory may be shown instead).
        if case .success(let fetched) = result, fetched.hasBytes, !fetched.notModified, fetched.staleAfterFailure == nil {
            for (key, decoder) in plan.audience.decodingStarts() {
                let data = fetched.loadedData(prefersFileURL: decoder.prefersFileURL)
                let outcome = decoder.decode(data)
                // An entry removed by another instance since the read: the decode job's path loads again.
                if case .failure = outcome, fetched.origin == .fileCache, data.fileCacheEntryVanished { continue }
                decoded[key] = outcome
            }
        }
        let now = Date()  // for stale-if-error, read before the lock
        let decision = decide(.fetchFinished(dataKey: plan.dataKey, fetch: plan.fetch, result, decoded: decoded, now: now))
        performer.perform(decision.work)
        return decision.fetchEnd
    }

    // MARK: - Previews (from the thread receiving the download)

    /// A chunk of a fetch arrived, starting at `offset` in the body. At the first chunk a session
    /// is made (`feed`) for each handler its audience names (a decoder that makes previews, a
    /// user listening who wants them); every chunk goes to the sessions, and the previews that
    /// are due are made off this thread and delivered to the users listening who want them.
    /// None of it takes the manager's lock: each delivery passes its user's gate, which drops a
    /// preview once the user's final callback is decided.
    func previewBytesArrived(_ chunk: Data, offset: Int, feed: PreviewFeed, audience: FetchAudience) {
        if offset == 0 {
            // Outside any lock: a session may allocate.
            feed.start(audience.previewSubscribers().compactMap { key, decoder in decoder.makePreviewSession().map { (key, $0) } })
        }
        for (key, session) in feed.append(chunk, at: offset) {
            EngineThreads.workers.async { [weak self] in
                let preview = session.makePreview()
                feed.previewMade(for: key)
                guard let self, let preview else { return }
                var work = PendingWork()
                work.deliveries = audience.previewDeliveries(preview, key: key)
                performer.perform(work)
            }
        }
    }
}

/// The preview sessions of one fetch, one per handler key whose users wanted previews when the
/// first bytes arrived, and when each may show its next preview.
///
/// The manager starts it with the first chunk (offset 0) and feeds it every chunk in order, on the
/// thread receiving the download. A chunk that does not continue the bytes seen (a resumed
/// download's first chunk is not its first byte) turns previews off for the fetch. A session's
/// preview is due when it said a stage is complete, no preview of it is being made, and
/// `interval` seconds have passed since its last one; a stage completed sooner waits for a later
/// chunk.
final class PreviewFeed: Sendable {
    private enum Phase {
        /// No chunk yet.
        case waiting
        /// Sessions are taking the bytes.
        case active
        /// No previews for this fetch.
        case off
    }

    private struct Entry {
        let session: AnyPreviewSession
        var lastPreview: MonotonicInstant?
        /// A completed stage has not been shown yet.
        var isDue = false
        /// A preview is being made.
        var isMaking = false
    }

    private struct State {
        var phase = Phase.waiting
        var entries: [ObjectKey: Entry] = [:]
        var nextOffset = 0
    }

    private let state = Lock(State())
    /// The shortest time between two previews of a session.
    let interval: Double

    init(interval: Double) {
        self.interval = interval
    }

    /// (Re)starts with `sessions`, for the bytes from offset 0; none turns previews off.
    func start(_ sessions: [(key: ObjectKey, session: AnyPreviewSession)]) {
        state.withLock { state in
            state.entries = [:]
            for (key, session) in sessions { state.entries[key] = Entry(session: session) }
            state.phase = sessions.isEmpty ? .off : .active
            state.nextOffset = 0
        }
    }

    /// Feeds `chunk` (starting at `offset` in the body) to every session; returns the sessions
    /// whose preview is to be made now (each then marked as making one until `previewMade(for:)`).
    func append(_ chunk: Data, at offset: Int) -> [(key: ObjectKey, session: AnyPreviewSession)] {
        let sessions = state.withLock { state -> [(key: ObjectKey, session: AnyPreviewSession)] in
            guard state.phase == .active, offset == state.nextOffset else {
                state.phase = .off
                state.entries = [:]
                return []
            }
            state.nextOffset += chunk.count
            return state.entries.map { ($0.key, $0.value.session) }
        }
        guard !sessions.isEmpty else { return [] }
        // Outside the lock: sessions find their stages themselves (chunks come one at a time).
        let steps = sessions.map { ($0.key, $0.session.append(chunk)) }
        let now = MonotonicInstant.now
        return state.withLock { state in
            var due: [(key: ObjectKey, session: AnyPreviewSession)] = []
            for (key, step) in steps {
                guard var entry = state.entries[key] else { continue }
                switch step {
                case .finished:
                    state.entries[key] = nil
                    continue
                case .ready:
                    entry.isDue = true
                case .waiting:
                    break
                }
                let rested = entry.lastPreview.map { now.seconds(since: $0) >= interval } ?? true
                if entry.isDue, !entry.isMaking, rested {
                    entry.isDue = false
                    entry.isMaking = true
                    entry.lastPreview = now
                    due.append((key, entry.session))
                }
                state.entries[key] = entry
            }
            return due
        }
    }

    /// The preview of `key`'s session has been made (or could not be).
    func previewMade(for key: ObjectKey) {
        state.withLock { $0.entries[key]?.isMaking = false }
    }
}

// MARK: - The fetch's record in the manager's state, and its audience

/// One download per data key, shared by every handler (decoder) of that key and by prefetches.
///
/// A class, changed in place in `ManagerState.fetches` under the manager's lock: as a struct,
/// each change was a copy out of the table (retaining every field), a copy of the subscriber set
/// (shared with the table's copy, so not uniquely referenced) and a store back, in sections as
/// hot as starting a load and cancelling the one it pushes out of the loading buffer.
/// Not `Sendable`: it lives in `ManagerState`. What the fetch's own task reads while it runs is
/// in its `audience`, which is.
final class FetchRecord {
    let identifier: UInt64
    let dataKey: String
    let request: ObjectRequest
    let policy: LoadPolicy
    /// The handlers waiting for the bytes; change them with `subscribe` and `unsubscribe`, which
    /// keep `audience` in step.
    private(set) var subscribers: Set<ObjectKey> = []
    /// Data-only prefetches waiting for these bytes.
    var prefetchHolds = 0
    /// Whether the fetch counts against the prefetch concurrency limit.
    var inPrefetchLane: Bool
    /// Its task, created once the lock that created the fetch is released.
    let task: FetchTaskSlot
    /// The fetch's priority, which its loader reads (see `LoadCore._refreshPriority`).
    let priority: LoadPriorityCell
    /// The priority of the data-only prefetches in `prefetchHolds`.
    var prefetchPriority = LoadPriority.veryLow
    /// Guards the download's commit to the file cache: an object stored over the data key closes
    /// it.
    let writeGate = WriteGate()
    /// The preview sessions of its bytes.
    let previews: PreviewFeed
    /// Who its task tells of progress, previews and the bytes without the manager's lock.
    let audience = FetchAudience()

    init(
        identifier: UInt64, dataKey: String, request: ObjectRequest, policy: LoadPolicy, inPrefetchLane: Bool,
        task: FetchTaskSlot, priority: LoadPriorityCell, previews: PreviewFeed
    ) {
        self.identifier = identifier
        self.dataKey = dataKey
        self.request = request
        self.policy = policy
        self.inPrefetchLane = inPrefetchLane
        self.task = task
        self.priority = priority
        self.previews = previews
    }

    /// Adds the handler of `key`, which decodes with `decoder`, to the fetch's subscribers.
    func subscribe(_ key: ObjectKey, decoder: AnyObjectDecoder?) {
        subscribers.insert(key)
        if let decoder { audience.subscribe(key, decoder: decoder) }
    }

    /// Takes the handler of `key` off the fetch's subscribers.
    func unsubscribe(_ key: ObjectKey) {
        subscribers.remove(key)
        audience.unsubscribe(key)
    }

    /// The bytes received so far (the loading buffer's push-out policy may read it).
    var progress: LoadProgress { audience.progress }

    var isWanted: Bool { !subscribers.isEmpty || prefetchHolds > 0 }
}

/// Who hears a fetch while it runs, reachable from the fetch's task without the manager's lock:
/// the handlers subscribed to it, each key with its decoder (its bytes are decoded for them
/// before the section that ends the fetch), and their users, for progress and previews.
///
/// The locked code keeps it in step with the fetch's record: a handler subscribing adds its key
/// (`FetchRecord.subscribe`); a handler starting to load, or a user joining a loading handler,
/// adds the users (`listen(to:key:cancelsWhenAbandoned:)`). A user re-managed, unmanaged or
/// answered is not taken out there: each delivery made from here passes its user's gate
/// (`AttachmentCurrency`), which drops a progress report or a preview once its attachment is
/// replaced or its final callback decided; the next report takes it out.
///
/// Why: finding the users of a progress report under the manager's lock was one section of that
/// lock per chunk of every download, and one more for the previews at the first chunk.
final class FetchAudience: Sendable {
    /// A user to tell of progress and previews, as attached when it began listening.
    struct Listener: Sendable {
        /// Its delivery, with the event each report replaces.
        var delivery: PendingDelivery
        /// Its handler's policy cancels a load nobody waits for any more: a released user then
        /// asks the manager whether the load is abandoned (`LoadCore._fetchUsersReleased`).
        let cancelsWhenAbandoned: Bool
    }

    private struct State {
        var subscribers: [ObjectKey: AnyObjectDecoder] = [:]
        var listeners: [Listener] = []
        var progress = LoadProgress(receivedBytes: 0, expectedBytes: nil)
        var isDecoding = false
    }

    private let state = Lock(State())

    // MARK: - Kept by the manager's locked code

    func subscribe(_ key: ObjectKey, decoder: AnyObjectDecoder) {
        state.withLock { $0.subscribers[key] = decoder }
    }

    func unsubscribe(_ key: ObjectKey) {
        state.withLock { $0.subscribers[key] = nil }
    }

    /// Adds the user of `record`, for its current attachment to the handler of `key` (under the
    /// manager's lock, as the record is read there). A listener already there for the same
    /// record is replaced.
    func listen(to record: Attachment, key: ObjectKey, fetch: UInt64, cancelsWhenAbandoned: Bool) {
        let none = LoadProgress(receivedBytes: 0, expectedBytes: nil)
        let listener = Listener(
            delivery: PendingDelivery(to: record, key: key, event: .progress(none), fetch: fetch),
            cancelsWhenAbandoned: cancelsWhenAbandoned)
        state.withLock { state in
            state.listeners.removeAll { $0.delivery.currency === listener.delivery.currency }
            state.listeners.append(listener)
        }
    }

    // MARK: - Read by the fetch's task

    /// The bytes received so far.
    var progress: LoadProgress { state.withLock { $0.progress } }

    /// The download is over and its task decodes the bytes for the handlers subscribed now
    /// (returned): from now on `isDecoding`.
    func decodingStarts() -> [(key: ObjectKey, decoder: AnyObjectDecoder)] {
        state.withLock { state in
            state.isDecoding = true
            return state.subscribers.map { ($0.key, $0.value) }
        }
    }

    /// Whether the fetch's task decodes its bytes, before the section that ends the fetch: its
    /// loads are as good as done, and the loading buffer lets them go rather than cancel them
    /// (`LoadCore._handleBufferOverflow`, `_cancelIfAbandoned`), as it does once the fetch ended.
    var isDecoding: Bool { state.withLock { $0.isDecoding } }

    /// Records `progress` and returns the deliveries that tell the listening users, and whether
    /// a user whose load may be cancelled without users has been released (then the manager is
    /// asked, once for that user). Listeners no longer current are taken out (by attachment: one
    /// that listens again meanwhile, re-managed for the same key, stays).
    func progressed(_ progress: LoadProgress) -> (deliveries: [PendingDelivery], usersReleased: Bool) {
        let listeners = state.withLock { state -> [Listener] in
            state.progress = progress
            return state.listeners
        }
        var deliveries: [PendingDelivery] = []
        var gone: [(currency: AttachmentCurrency?, attachment: UInt64)] = []
        var usersReleased = false
        for var listener in listeners {
            let (currency, attachment) = (listener.delivery.currency, listener.delivery.attachment)
            guard currency?.isCurrent(attachment) == true else {
                gone.append((currency, attachment))
                continue
            }
            guard listener.delivery.user.isAlive else {
                gone.append((currency, attachment))
                usersReleased = usersReleased || listener.cancelsWhenAbandoned
                continue
            }
            listener.delivery.event = .progress(progress)
            deliveries.append(listener.delivery)
        }
        if !gone.isEmpty {
            state.withLock { state in
                state.listeners.removeAll { listener in
                    gone.contains { $0.currency === listener.delivery.currency && $0.attachment == listener.delivery.attachment }
                }
            }
        }
        return (deliveries, usersReleased)
    }

    /// The handlers to make preview sessions for at the first chunk, with their decoders: those
    /// whose decoder makes previews and that have a user listening who wants them. A handler
    /// joining later gets none (its previews would start mid-file).
    func previewSubscribers() -> [(key: ObjectKey, decoder: AnyObjectDecoder)] {
        let (subscribers, listeners) = state.withLock { ($0.subscribers, $0.listeners) }
        return subscribers.compactMap { key, decoder in
            guard decoder.makesPreviews,
                listeners.contains(where: { $0.delivery.key == key && $0.delivery.user.wantsPreviews && $0.delivery.user.isAlive })
            else { return nil }
            return (key, decoder)
        }
    }

    /// The deliveries of a preview of `key`'s object to the users listening who want previews.
    func previewDeliveries(_ preview: any Sendable, key: ObjectKey) -> [PendingDelivery] {
        state.withLock { $0.listeners }.compactMap { listener in
            guard listener.delivery.key == key, listener.delivery.user.wantsPreviews, listener.delivery.user.isAlive else { return nil }
            var delivery = listener.delivery
            delivery.event = .preview(preview)
            return delivery
        }
    }
}

// MARK: - The write gate

/// Orders a load's file-cache writes against an object the app stores over it.
///
/// A load writes through its gate: the download's commit (one gate per fetch), a variant made by
/// a decode (one gate per decode that stores a variant), a store's own bytes (one gate per
/// store). When a stored object supersedes the load, the manager closes the gate, under its lock
/// and without waiting: every write that has not begun is skipped from then on. The store waits
/// (`waitUntilIdle()`) for a write that had already begun, and only then writes its own bytes, so
/// the stored object is what the file cache keeps.
///
/// Nothing is held while a write runs: `begin()` and `end()` take the gate's lock for a moment
/// each, so closing never blocks the manager's lock behind a disk.
final class WriteGate: Sendable {
    private struct State {
        var isClosed = false
        var writers = 0
    }

    private let state = Lock(State())

    /// Whether a write may start now; when `true`, call `end()` once it is done.
    func begin() -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.writers += 1
            return true
        }
    }

    /// A write that `begin()` allowed has finished.
    func end() {
        state.withLock { $0.writers -= 1 }
    }

    /// Runs `write` unless the gate is closed; returns whether it ran.
    @discardableResult
    func write(_ write: () throws -> Void) rethrows -> Bool {
        guard begin() else { return false }
        defer { end() }
        try write()
        return true
    }

    /// Runs `write` unless `gate` is closed; with no gate, always. Returns whether it ran.
    @discardableResult
    static func write(through gate: WriteGate?, _ write: () throws -> Void) rethrows -> Bool {
        guard let gate else {
            try write()
            return true
        }
        return try gate.write(write)
    }

    /// Skips every write that has not begun. Never waits.
    func close() {
        state.withLock { $0.isClosed = true }
    }

    /// Whether `close()` was called.
    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Whether no write is running.
    var isIdle: Bool { state.withLock { $0.writers == 0 } }

    /// Returns once no write is running (after `close()`, none can start). Writes are single file
    /// commits, so this waits milliseconds; it sleeps rather than blocking a thread.
    func waitUntilIdle() async {
        while !isIdle {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}
