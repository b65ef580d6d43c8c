import Foundation
import ManagedCacheLocking

// A fetch's task, from its creation after the lock that decided it to the section that ends it,
// one stage after another:
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
