import ManagedCacheLocking

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
