import Foundation

/// Where an `ObjectManager` decides what every event means for its handlers, fetches, loading
/// buffer and users. Each method here runs under the manager's lock (the leading `_`), changes
/// the state in place and returns the work to carry out after the lock (`PendingWork`: deliveries
/// to users, cancellations, purges, events, objects to release) and the fetches to start
/// (`ManagerState.fetchStarts`). None of them calls a user, a loader or the disk, or waits.
///
/// `ObjectManager`'s methods are the façade: each reads what it needs before the lock (a user's
/// properties, the memory cache, the file cache's index), calls one method below under the
/// lock, then performs the returned work (`ObjectManager.perform`).
///
/// `decide(_:in:)` is the one entry: the façade turns each call and each load's report into an
/// `Event`, and gets back a `Decision` (the work, and what else it is to do after the lock). The
/// events, and the method `decide` hands each to:
///
/// | Event | Decided by | File |
/// | --- | --- | --- |
/// | `manage`: `manage`, nothing in memory | `_attachAndDecide` | `LoadCore+Attaching` |
/// | `unloadable`: `manage` of a request nothing can load | `_answerUnloadable` | `LoadCore+Attaching` |
/// | `unmanage`, or a user re-managed for another key | `_detach(userID:)` | `LoadCore+Attaching` |
/// | `fileLookupMissed`: a miss, or an unusable entry | `_fileLookupMissed` | `LoadCore+Loading` |
/// | `fetchUsersReleased`: a progress report found a user released | `_fetchUsersReleased` | `LoadCore+Loading` |
/// | `loadingBufferResized` | `_resizeLoadingBuffer` | `LoadCore+Loading` |
/// | `fetchFinished`: bytes (decoded on the fetch's task, most often), a `304`, a failure | `_fetchFinished` | `LoadCore+Finishing` |
/// | `decodeFinished` (a file-cache hit's too) | `_completeDecode` | `LoadCore+Finishing` |
/// | `objectStored`, `storeStarted`, `storeMade`, `storeWritten` | `_storeObject`, `_startStoring`, `_finishStoring`, `_endPendingStore` | `LoadCore+Storing` |
/// | `prefetch`, `prefetchCancelled` | `_enqueuePrefetches`, `_cancelPrefetching` | `LoadCore+Prefetching` |
/// | `cancelAll` | `_cancelAll` | `LoadCore+Prefetching` |
/// | `objectRemoved`, `memoryEmptied` (remove all, memory pressure) | `_dropIdleHandler`, `_dropIdleHandlers` | `LoadCore+Removing` |
/// | `shutDown`: the manager deallocated | `_shutDown` | `LoadCore+Removing` |
/// | `sweepStep`: the background sweep of the tables | `_backgroundSweepStep` | `LoadCore+Sweeping` |
/// | a remembered failure expiring | `FailureMemory`, asked by the next `manage` or prefetch | `LoadCore+Attaching` |
///
/// One event does not go through `decide`: a `manage` whose object is in memory calls
/// `_memoryHit` (`LoadCore+Attaching`) directly. It is the hot path (a cell re-managed on every
/// scroll step), and through `decide` it cost a quarter more instructions per call in the
/// `manage-hit` benchmark under callgrind: the event's payload retained and released, the
/// `Decision` copied through value witnesses, the user's link made in an escaping closure.
///
/// The handler's phases, and the transitions these methods choose among, are on
/// `ObjectHandler`; a fetch's records are `FetchRecord`s. Only these methods call a handler's
/// transitions and change its users, request or policy. `LoadCoreTableTests` drive them with a
/// state and an event, without a manager.
///
/// A value of `let`s, copied into the manager once: its caches are references, so the core
/// changes the same memory cache the manager reads before its lock.
struct LoadCore: Sendable {
    /// The decoded objects, by key (`ObjectManager.memoryCache`).
    let memoryCache: MemoryCache<ObjectKey, CachedObject>
    /// Bytes nobody decoded yet and no file holds (`ObjectManager.undecodedData`).
    let undecodedData: MemoryCache<String, Data>
    /// The manager's configuration: policies, limits, the failure memory's clock.
    let configuration: ObjectManager.Configuration
    /// Whether the manager has a file cache to look in before loading.
    let hasFileCache: Bool
    /// Makes the tasks of the fetches the core starts.
    let fetchRunner: FetchRunner
}

extension LoadCore {
    /// Everything the engine reacts to, with what the façade read before the lock.
    enum Event {
        /// `manage` with nothing fresh in memory (`stale`: an object past its freshness);
        /// `knownFileMiss`: the file cache's index certainly lacks the bytes.
        case manage(
            ManageCall, key: ObjectKey, policy: LoadPolicy, decoder: AnyObjectDecoder, stale: CachedObject?,
            link: @Sendable () -> any UserLink, knownFileMiss: Bool, deferred: Bool)
        /// `manage` of a request nothing can load, for `reason`.
        case unloadable(ManageCall, key: ObjectKey, reason: String, link: @Sendable () -> any UserLink)
        /// `unmanage`, or a main-actor user's `unmanage`.
        case unmanage(ObjectIdentifier)
        /// The file-cache lookup of generation `generation` found nothing usable.
        case fileLookupMissed(ObjectKey, generation: UInt64)
        /// A progress report of the fetch found a user of it released (`FetchAudience`).
        case fetchUsersReleased(dataKey: String, fetch: UInt64)
        /// `decoded`: the objects the fetch's task decoded from the bytes before the lock, by
        /// handler key. `now`: for stale-if-error.
        case fetchFinished(
            dataKey: String, fetch: UInt64, Result<FetchedData, ManagedCacheError>,
            decoded: [ObjectKey: Result<any Sendable, ManagedCacheError>], now: Date)
        case decodeFinished(DecodeJob, Result<any Sendable, ManagedCacheError>, countingFileCacheHit: Bool)
        case loadingBufferResized(Int)
        case objectStored(any Sendable, StorePlan, cost: Int)
        case storeStarted(StorePlan, ObjectRequest, AnyObjectDecoder)
        case storeMade(Result<any Sendable, StoreError>, StorePlan, cost: Int, generation: UInt64)
        case storeWritten(WriteGate, fileKey: String)
        /// `unloadable[i]`: why request `i` cannot load, if it cannot.
        case prefetch([ObjectRequest], unloadable: [String?], AnyObjectDecoder?, LoadPriority, PrefetchBatch?)
        case prefetchCancelled(matching: (String) -> Bool)
        case cancelAll
        case objectRemoved(ObjectKey)
        case memoryEmptied
        case shutDown
        case sweepStep
    }

    /// What the façade does once the lock is released: `work`, and for some events one more step
    /// (`next`), one case per kind of event that has one.
    struct Decision {
        var work = PendingWork()
        var next = Next.none

        /// The step after the work that an event's decision adds.
        enum Next {
            case none
            /// `manage`: the file cache is read next.
            case fileLookup(FileLookup)
            /// `fetchFinished`: the decodes to run and the variants to store, on the fetch's task.
            case fetchEnd(FetchEnd)
            /// `unloadable`: the call was answered (otherwise the key's handler answers it like any other).
            case answeredAsUnloadable
            /// `objectStored`, `storeStarted`: what the store's write waits for, and the
            /// generation the made object is for.
            case store(StoreTicket, generation: UInt64)
            /// `storeMade`: whether the key still waited for the object.
            case storeMade(isCurrent: Bool)
            /// `shutDown`: every fetch task to cancel, and the deliveries to make without a check.
            case shutDown(tasksToCancel: [FetchTaskSlot], deliveries: [PendingDelivery])
            /// `sweepStep`: whether nothing is left to sweep.
            case sweepStep(finished: Bool)
        }

        var fileLookup: FileLookup? {
            if case .fileLookup(let lookup) = next { lookup } else { nil }
        }
        var fetchEnd: FetchEnd {
            if case .fetchEnd(let end) = next { end } else { FetchEnd() }
        }
        var answeredAsUnloadable: Bool {
            if case .answeredAsUnloadable = next { true } else { false }
        }
        var ticket: StoreTicket {
            if case .store(let ticket, _) = next { ticket } else { StoreTicket() }
        }
        var generation: UInt64 {
            if case .store(_, let generation) = next { generation } else { 0 }
        }
        var isCurrent: Bool {
            if case .storeMade(let isCurrent) = next { isCurrent } else { false }
        }
        var tasksToCancel: [FetchTaskSlot] {
            if case .shutDown(let tasks, _) = next { tasks } else { [] }
        }
        var unconditionalDeliveries: [PendingDelivery] {
            if case .shutDown(_, let deliveries) = next { deliveries } else { [] }
        }
        var sweepFinished: Bool {
            if case .sweepStep(let finished) = next { finished } else { false }
        }
    }

    /// Decides `event`, which happened at `now` (on the failure memory's clock,
    /// `Configuration.failureClock`), on `state` (under the manager's lock): changes the state,
    /// and returns what to do after the lock. The one way the façade asks the core anything.
    @inline(__always)
    func decide(_ event: Event, at now: MonotonicInstant, in state: inout ManagerState) -> Decision {
        state.now = now
        var decision = Decision()
        switch event {
        case .manage(let call, let key, let policy, let decoder, let stale, let link, let knownFileMiss, let deferred):
            if deferred { state.statistics.deferredCalls += 1 }
            var lookup: FileLookup?
            decision.work = _attachAndDecide(
                call, key: key, policy: policy, decoder: decoder, stale: stale, link: link, knownFileMiss: knownFileMiss,
                fileLookup: &lookup, in: &state)
            if let lookup { decision.next = .fileLookup(lookup) }
        case .unloadable(let call, let key, let reason, let link):
            if let work = _answerUnloadable(call, key: key, reason: reason, link: link, in: &state) {
                decision.work = work
                decision.next = .answeredAsUnloadable
            }
        case .unmanage(let userID):
            decision.work = _detach(userID: userID, in: &state)
        case .fileLookupMissed(let key, let generation):
            decision.work = _fileLookupMissed(key, generation: generation, in: &state)
        case .fetchUsersReleased(let dataKey, let fetch):
            decision.work = _fetchUsersReleased(dataKey: dataKey, fetch: fetch, in: &state)
        case .fetchFinished(let dataKey, let fetch, let result, let decoded, let now):
            let (work, end) = _fetchFinished(dataKey: dataKey, fetch: fetch, result: result, decoded: decoded, now: now, in: &state)
            (decision.work, decision.next) = (work, .fetchEnd(end))
        case .decodeFinished(let job, let outcome, let countingFileCacheHit):
            decision.work = _completeDecode(job, outcome: outcome, countingFileCacheHit: countingFileCacheHit, in: &state)
        case .loadingBufferResized(let capacity):
            decision.work = _resizeLoadingBuffer(to: capacity, in: &state)
        case .objectStored(let object, let plan, let cost):
            let (work, ticket) = _storeObject(object, plan: plan, cost: cost, in: &state)
            (decision.work, decision.next) = (work, .store(ticket, generation: 0))
        case .storeStarted(let plan, let request, let decoder):
            let (work, ticket, generation) = _startStoring(plan, request: request, decoder: decoder, in: &state)
            (decision.work, decision.next) = (work, .store(ticket, generation: generation))
        case .storeMade(let made, let plan, let cost, let generation):
            let (work, isCurrent) = _finishStoring(made, plan: plan, cost: cost, generation: generation, in: &state)
            (decision.work, decision.next) = (work, .storeMade(isCurrent: isCurrent))
        case .storeWritten(let gate, let fileKey):
            _endPendingStore(gate, fileKey: fileKey, in: &state)
        case .prefetch(let requests, let unloadable, let decoder, let priority, let batch):
            decision.work = _enqueuePrefetches(
                requests, unloadable: unloadable, decoder: decoder, priority: priority, batch: batch, in: &state)
        case .prefetchCancelled(let matches):
            decision.work = _cancelPrefetching(where: matches, in: &state)
        case .cancelAll:
            decision.work = _cancelAll(in: &state)
        case .objectRemoved(let key):
            _dropIdleHandler(key, in: &state)
        case .memoryEmptied:
            decision.work.retired = _dropIdleHandlers(in: &state)
        case .shutDown:
            let (tasks, deliveries) = _shutDown(in: &state)
            decision.next = .shutDown(tasksToCancel: tasks, deliveries: deliveries)
        case .sweepStep:
            let (retired, finished) = _backgroundSweepStep(in: &state)
            (decision.work.retired, decision.next) = (retired, .sweepStep(finished: finished))
        }
        if !state.preloadsToCancel.isEmpty {
            decision.work.cancel(preloads: state.preloadsToCancel)
            state.preloadsToCancel.removeAll()
        }
        return decision
    }
}
