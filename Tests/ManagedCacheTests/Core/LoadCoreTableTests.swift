import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// `LoadCore.decide` decides without I/O: these tests give it a state and an event, and read the
/// state and the work it returns. No manager, loader, network, file system, thread or clock.
///
/// | Events, from a fresh state | Handler of A after | Work of the last event |
/// | --- | --- | --- |
/// | manage A | loading | one fetch to start; A in the loading buffer |
/// | manage A; another user manages A | loading | nothing to start (joins the load) |
/// | manage A; fetch of A brings bytes | loaded | one decode to run |
/// | manage A; fetch; decode succeeds | ready | `ready(network)` to A's user; A in the memory cache |
/// | manage A; fetch of A brings bytes its task decoded | ready | `ready(network)` to A's user in the same section; no decode to run |
/// | … ready; another user manages A | ready | `ready(sharedObject)` to it; no fetch |
/// | manage A; fetch fails (HTTP 404) | failed | `failed(httpStatus)` to A's user; a `loadFailed` event |
/// | … failed; another user manages A | failed | `failed(recentlyFailed)` to it; no fetch |
/// | manage A; fetch; decode fails | failed | `failed(decodingFailed)`; the bytes purged from the file cache |
/// | manage A, B, C (buffer of 2) | new | `cancelled(loadingBufferOverflow)` to A's user; A's fetch cancelled |
/// | manage A, B; A's task decodes its bytes; manage C (buffer of 2) | loading | nothing: A leaves the buffer, its decode delivers it |
/// | manage A; its user unmanaged (default policy) | loading | nothing (the load finishes for the caches) |
/// | manage A; its user unmanaged (`finishLoadingWithoutUsers` off) | new | A's fetch cancelled; nothing delivered |
/// | manage A; a fetch of A that was replaced ends | loading | nothing |
/// | prefetch A | loading (held by the prefetch) | one fetch to start, in the prefetch lane |
/// | manage A; the app stores an object for A | ready | `ready(stored)` to A's user; A's fetch cancelled |
/// | manage A; `cancelAll` | new | `cancelled(managerShutDown)` to A's user; A's fetch cancelled |
/// | manage A; fetch; decode; user released; memory emptied | none | the handler dropped, to free after the lock |
/// | manage A; fetch; decode; its user unmanaged | new (idle) | nothing to free: the memory cache holds A's value, and the handler stays for A's next hit |
/// | … idle; the memory cache loses A; a sweep | none | the idle handler dropped |
/// | manage A; fetch; decode; the app puts another value under A; its user unmanaged | none | the handler dropped, to free after the lock |
/// | manage A (decoder makes no previews); A's first bytes | loading | no preview session (A's fetch's audience) |
/// | manage A (one user wants previews, one joins not wanting them); a preview of A | loading | `preview` to the first (A's fetch's audience) |
/// | manage A; another user joins; a progress report | loading | `progress` to both (A's fetch's audience), no manager section asked for |
/// | manage A (`finishLoadingWithoutUsers` off); user released; a progress report; `fetchUsersReleased` | new | the report asks the manager; A's fetch cancelled |
@Suite struct LoadCoreTableTests {
    /// What a handler is doing, by name.
    enum Phase: String { case none, new, loading, loaded, ready, failed }

    /// A core with its caches and its state, and nothing else.
    struct Bench {
        var state: ManagerState
        let core: LoadCore
        let decoder = DataDecoder()
        /// The time of every event: the core reads no clock, so none passes.
        static let now = MonotonicInstant(nanoseconds: 1_000_000_000)

        init(loadingBufferSize: Int = 12, policy: (inout LoadPolicy) -> Void = { _ in }) {
            var configuration = ObjectManager.Configuration()
            policy(&configuration.policy)
            state = ManagerState(loadingBufferSize: loadingBufferSize)
            core = LoadCore(
                memoryCache: MemoryCache(countLimit: 20, costLimit: 1 << 20),
                undecodedData: MemoryCache(countLimit: 100, costLimit: 1 << 20), configuration: configuration,
                hasFileCache: false, fetchRunner: FetchRunner())
        }

        func key(_ name: String) -> ObjectKey { ObjectRequest(url: Self.url(name)).objectKey(variant: decoder.identifier) }

        static func url(_ name: String) -> URL { URL(string: "https://example.com/\(name)")! }

        func phase(_ name: String) -> Phase {
            guard let handler = state.handlers[key(name)] else { return .none }
            switch handler.phase {
            case .new: return .new
            case .loading: return .loading
            case .loaded: return .loaded
            case .ready: return .ready
            case .failed: return .failed
            }
        }

        /// `manage(user)` as `ObjectManager.manage` decides it when nothing is in memory.
        mutating func manage(_ user: RecordingUser<DataDecoder>, wantsPreviews: Bool = false) -> PendingWork {
            let request = user.objectRequest!
            let call = ManageCall(
                request: request, userID: ObjectIdentifier(user), delivery: .immediate, wantsPreviews: wantsPreviews,
                isAwaiting: false)
            let event = LoadCore.Event.manage(
                call, key: request.objectKey(variant: decoder.identifier), policy: core.configuration.policy.applying(request.policy),
                decoder: AnyObjectDecoder(decoder, identifier: decoder.identifier), stale: nil,
                link: { ThreadSafeUserLink(user, delivery: .immediate, wantsPreviews: wantsPreviews) }, knownFileMiss: false,
                deferred: false)
            return core.decide(event, at: Self.now, in: &state).work
        }

        mutating func unmanage(_ user: RecordingUser<DataDecoder>) -> PendingWork {
            core.decide(.unmanage(ObjectIdentifier(user)), at: Self.now, in: &state).work
        }

        /// The fetch of `name` ends with `result`, with the objects its task decoded before the
        /// lock (`decoded`); `identifier` defaults to the current fetch's.
        mutating func fetchEnds(
            _ name: String, _ result: Result<FetchedData, ManagedCacheError>, identifier: UInt64? = nil,
            decoded: [ObjectKey: Result<any Sendable, ManagedCacheError>] = [:]
        ) -> (PendingWork, [DecodeJob]) {
            let dataKey = key(name).dataKey
            let fetch = identifier ?? state.fetches[dataKey]!.identifier
            let event = LoadCore.Event.fetchFinished(
                dataKey: dataKey, fetch: fetch, result, decoded: decoded, now: Date(timeIntervalSince1970: 1_800_000_000))
            let decision = core.decide(event, at: Self.now, in: &state)
            return (decision.work, decision.fetchEnd.decodes)
        }

        mutating func decodeEnds(_ job: DecodeJob, _ outcome: Result<any Sendable, ManagedCacheError>) -> PendingWork {
            core.decide(.decodeFinished(job, outcome, countingFileCacheHit: false), at: Self.now, in: &state).work
        }

        /// `manage(user)` of `name`, whose fetch brings bytes and whose decode succeeds: the
        /// handler ready, its value in the memory cache.
        mutating func loadToReady(_ user: RecordingUser<DataDecoder>, _ name: String) throws {
            _ = manage(user)
            let (_, jobs) = fetchEnds(name, .success(LoadCoreTableTests.bytes()))
            _ = decodeEnds(try #require(jobs.first), .success(Data("payload".utf8)))
        }

        /// Fetches decided and not yet handed to the lock (as `ManagerLock` takes them).
        mutating func takeStarts() -> Int { state.takeFetchStarts().count }
    }

    static func bytes(_ text: String = "payload") -> FetchedData {
        let data = Data(text.utf8)
        return FetchedData(
            memory: data, entry: nil, byteCount: data.count, origin: .network, contentType: nil, freshness: nil)
    }

    static func user(_ name: String) -> RecordingUser<DataDecoder> {
        RecordingUser(ObjectRequest(url: Bench.url(name)), decoder: DataDecoder())
    }

    /// The events of `work`'s deliveries, by name.
    static func delivered(_ work: PendingWork) -> [String] { delivered(work.deliveries) }

    /// The events of `deliveries`, by name.
    static func delivered(_ deliveries: [PendingDelivery]) -> [String] {
        deliveries.map { delivery in
            switch delivery.event {
            case .ready(_, let origin, _): return "ready(\(origin))"
            case .failed(.cancelled(let reason)): return "cancelled(\(reason))"
            case .failed(.recentlyFailed): return "recentlyFailed"
            case .failed(let error): return "failed(\(error.kind))"
            case .progress: return "progress"
            case .preview: return "preview"
            }
        }
    }

    static func cancelledFetches(_ work: PendingWork) -> Int { work.cancellations?.takeAll().count ?? 0 }

    @Test func managingAKeyNothingHoldsStartsOneFetchAndTakesABufferSlot() {
        var bench = Bench()
        let user = Self.user("a")
        let work = bench.manage(user)
        #expect(bench.phase("a") == .loading)
        #expect(bench.takeStarts() == 1)
        #expect(work.deliveries.isEmpty)
        #expect(bench.state.loadingBuffer.keys == [bench.key("a")])
    }

    @Test func aSecondUserJoinsTheLoadWithoutAFetchOfItsOwn() {
        var bench = Bench()
        let (first, second) = (Self.user("a"), Self.user("a"))
        _ = bench.manage(first)
        _ = bench.takeStarts()
        let work = bench.manage(second)
        #expect(bench.phase("a") == .loading)
        #expect(bench.takeStarts() == 0)
        #expect(work.deliveries.isEmpty)
        let listed = bench.state.handlers[bench.key("a")]?.deliveries(of: .progress(LoadProgress(receivedBytes: 0, expectedBytes: nil)))
        #expect(listed?.count == 2)
    }

    @Test func bytesArrivingMakeOneDecodeAndLeaveTheBuffer() {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user)
        let (work, jobs) = bench.fetchEnds("a", .success(Self.bytes()))
        #expect(bench.phase("a") == .loaded)
        #expect(jobs.count == 1)
        #expect(work.deliveries.isEmpty)
        #expect(bench.state.loadingBuffer.keys.isEmpty)
        #expect(bench.state.fetches.isEmpty)
    }

    @Test func aDecodedObjectGoesToTheUserAndTheMemoryCacheAndIsSharedAfter() throws {
        var bench = Bench()
        let (first, second) = (Self.user("a"), Self.user("a"))
        _ = bench.manage(first)
        let (_, jobs) = bench.fetchEnds("a", .success(Self.bytes()))
        let job = try #require(jobs.first)
        let decoded = bench.decodeEnds(job, .success(Data("payload".utf8)))
        #expect(bench.phase("a") == .ready)
        #expect(Self.delivered(decoded) == ["ready(network)"])
        #expect(bench.core.memoryCache.contains(bench.key("a")))

        let shared = bench.manage(second)
        #expect(Self.delivered(shared) == ["ready(sharedObject)"])
        #expect(bench.takeStarts() == 1)  // the first manage's fetch only
    }

    @Test func aFailedFetchFailsTheUsersAndIsRememberedForTheNext() {
        var bench = Bench()
        let (first, second) = (Self.user("a"), Self.user("a"))
        _ = bench.manage(first)
        _ = bench.takeStarts()
        let (failed, jobs) = bench.fetchEnds("a", .failure(.httpStatus(code: 404)))
        #expect(bench.phase("a") == .failed)
        #expect(jobs.isEmpty)
        #expect(Self.delivered(failed) == ["failed(httpStatus)"])
        #expect(failed.events.count == 1)

        let answered = bench.manage(second)
        #expect(Self.delivered(answered) == ["recentlyFailed"])
        #expect(bench.takeStarts() == 0)
        #expect(bench.phase("a") == .failed)
    }

    @Test func aFailedDecodeFailsTheUsersAndPurgesTheBytes() throws {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user)
        let (_, jobs) = bench.fetchEnds("a", .success(Self.bytes()))
        let work = bench.decodeEnds(try #require(jobs.first), .failure(.decodingFailed(reason: "not a payload")))
        #expect(bench.phase("a") == .failed)
        #expect(Self.delivered(work) == ["failed(decoding)"])
        #expect(work.fileCachePurges == [bench.key("a").dataKey])
        #expect(!bench.core.memoryCache.contains(bench.key("a")))
    }

    @Test func aFullLoadingBufferCancelsItsOldestLoadAndTellsItsUser() {
        var bench = Bench(loadingBufferSize: 2)
        let users = ["a", "b", "c"].map(Self.user)
        _ = bench.manage(users[0])
        _ = bench.manage(users[1])
        let work = bench.manage(users[2])
        #expect(bench.phase("a") == .new)
        #expect(bench.phase("c") == .loading)
        #expect(Self.delivered(work) == ["cancelled(loadingBufferOverflow)"])
        #expect(work.deliveries.first?.user.userID == ObjectIdentifier(users[0]))
        #expect(Self.cancelledFetches(work) == 1)
        #expect(bench.state.loadingBuffer.keys == [bench.key("b"), bench.key("c")])
    }

    @Test func aLoadWhoseLastUserLeavesFinishesUnderTheDefaultPolicy() {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user)
        let work = bench.unmanage(user)
        #expect(bench.phase("a") == .loading)
        #expect(work.deliveries.isEmpty)
        #expect(Self.cancelledFetches(work) == 0)
    }

    @Test func aLoadWhoseLastUserLeavesIsCancelledWhenThePolicySaysSo() {
        var bench = Bench { $0.finishLoadingWithoutUsers = false }
        let user = Self.user("a")
        _ = bench.manage(user)
        let work = bench.unmanage(user)
        #expect(bench.phase("a") == .new)
        #expect(work.deliveries.isEmpty)
        #expect(Self.cancelledFetches(work) == 1)
        #expect(bench.state.fetches.isEmpty)
    }

    @Test func theEndOfAReplacedFetchChangesNothing() {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user)
        let current = bench.state.fetches[bench.key("a").dataKey]!.identifier
        let (work, jobs) = bench.fetchEnds("a", .success(Self.bytes()), identifier: current &+ 1000)
        #expect(bench.phase("a") == .loading)
        #expect(jobs.isEmpty)
        #expect(work.isEmpty)
    }

    @Test func aPrefetchStartsAFetchInThePrefetchLaneWithNoUser() {
        var bench = Bench()
        let request = ObjectRequest(url: Bench.url("a"))
        let decoder = AnyObjectDecoder(bench.decoder, identifier: bench.decoder.identifier)
        let work = bench.core.decide(.prefetch([request], unloadable: [nil], decoder, .low, nil), at: Bench.now, in: &bench.state).work
        #expect(bench.phase("a") == .loading)
        #expect(bench.state.handlers[bench.key("a")]?.heldByPrefetch == true)
        #expect(bench.state.runningPrefetches == 1)
        #expect(bench.takeStarts() == 1)
        #expect(work.deliveries.isEmpty)
        #expect(bench.state.loadingBuffer.keys.isEmpty)
    }

    @Test func aStoredObjectReplacesTheLoadAndGoesToItsUsers() {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user)
        let key = bench.key("a")
        let plan = StorePlan(
            key: key, policy: bench.core.configuration.policy, fileKey: key.dataKey, asksForFile: false, writesFile: false)
        let work = bench.core.decide(.objectStored(Data("stored".utf8), plan, cost: 6), at: Bench.now, in: &bench.state).work
        #expect(bench.phase("a") == .ready)
        #expect(Self.delivered(work) == ["ready(stored)"])
        #expect(Self.cancelledFetches(work) == 1)
        #expect(bench.state.fetches.isEmpty)
        #expect(bench.core.memoryCache.contains(key))
    }

    @Test func cancellingEverythingTellsTheUsersTheManagerShutDown() {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user)
        let work = bench.core.decide(.cancelAll, at: Bench.now, in: &bench.state).work
        #expect(bench.phase("a") == .new)
        #expect(Self.delivered(work) == ["cancelled(managerShutDown)"])
        #expect(Self.cancelledFetches(work) == 1)
        #expect(bench.state.fetches.isEmpty)
    }

    @Test func emptyingMemoryDropsAHandlerWhoseUsersWereReleased() throws {
        var bench = Bench()
        var user: RecordingUser<DataDecoder>? = Self.user("a")
        try bench.loadToReady(user!, "a")
        user = nil  // held weakly: its record stays listed until a sweep or this
        #expect(bench.phase("a") == .ready)
        let work = bench.core.decide(.memoryEmptied, at: Bench.now, in: &bench.state).work
        #expect(bench.phase("a") == .none)
        #expect(work.retired.count == 1)
        #expect(work.deliveries.isEmpty)
    }

    @Test func aHandlerWhoseLastUserLeavesIdlesWhileTheMemoryCacheHoldsItsValue() throws {
        var bench = Bench()
        let user = Self.user("a")
        try bench.loadToReady(user, "a")
        let left = bench.unmanage(user)
        #expect(bench.phase("a") == .new)
        #expect(bench.state.handlers[bench.key("a")]?.isIdle == true)
        #expect(left.retired.isEmpty && left.released.isEmpty)

        // Out of memory, the idle handler goes at the next sweep.
        bench.core.memoryCache.removeValue(forKey: bench.key("a"))
        bench.state.sweep.begin(handlers: Array(bench.state.handlers.keys), attachments: [])
        let swept = bench.core._sweepStep(budget: TableSweep.budget, in: &bench.state)
        #expect(bench.phase("a") == .none)
        #expect(swept.count == 1)
    }

    @Test func aHandlerWhoseValueTheMemoryCacheNoLongerHoldsIsDroppedWithItsLastUser() throws {
        var bench = Bench()
        let user = Self.user("a")
        try bench.loadToReady(user, "a")
        bench.core.memoryCache.setValue(CachedObject(object: Data("other".utf8), freshness: nil, cost: 5), forKey: bench.key("a"), cost: 5)
        let left = bench.unmanage(user)
        #expect(bench.phase("a") == .none)
        #expect(left.retired.count == 1)
    }

    @Test func firstBytesMakeNoPreviewSessionForADecoderThatMakesNone() {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user, wantsPreviews: true)
        let audience = bench.state.fetches[bench.key("a").dataKey]!.audience
        #expect(audience.previewSubscribers().isEmpty)
        #expect(bench.phase("a") == .loading)
    }

    @Test func aPreviewGoesToTheListeningUsersThatWantPreviews() {
        var bench = Bench()
        let wanting = Self.user("a")
        let other = Self.user("a")
        _ = bench.manage(wanting, wantsPreviews: true)
        _ = bench.manage(other)
        let audience = bench.state.fetches[bench.key("a").dataKey]!.audience
        let deliveries = audience.previewDeliveries("first scans", key: bench.key("a"))
        #expect(Self.delivered(deliveries) == ["preview"])
        #expect(deliveries.map(\.user.userID) == [ObjectIdentifier(wanting)])
        #expect(audience.previewDeliveries("other key", key: Bench().key("b")).isEmpty)
        #expect(bench.phase("a") == .loading)
    }

    @Test func aProgressReportGoesToEveryUserOfTheLoadWithoutTheManager() {
        var bench = Bench()
        let first = Self.user("a")
        let second = Self.user("a")
        _ = bench.manage(first)
        _ = bench.manage(second)
        let audience = bench.state.fetches[bench.key("a").dataKey]!.audience
        let (deliveries, usersReleased) = audience.progressed(LoadProgress(receivedBytes: 10, expectedBytes: 100))
        #expect(Set(deliveries.map(\.user.userID)) == [ObjectIdentifier(first), ObjectIdentifier(second)])
        #expect(deliveries.allSatisfy { if case .progress(let progress) = $0.event { progress.receivedBytes == 10 } else { false } })
        #expect(!usersReleased)
        #expect(bench.state.fetches[bench.key("a").dataKey]!.progress.receivedBytes == 10)
        // A user unmanaged is not current for this load any more: no report.
        _ = bench.unmanage(second)
        let later = audience.progressed(LoadProgress(receivedBytes: 20, expectedBytes: 100))
        #expect(later.deliveries.map(\.user.userID) == [ObjectIdentifier(first)])
        // Managed again for the same key: one listener, for its new attachment.
        let before = later.deliveries.first?.attachment
        _ = bench.manage(first)
        let again = audience.progressed(LoadProgress(receivedBytes: 30, expectedBytes: 100))
        #expect(again.deliveries.count == 1)
        #expect(again.deliveries.first?.attachment != before)
        #expect(again.deliveries.first.map { $0.currency?.isCurrent($0.attachment) == true } == true)
    }

    @Test func aReportFindingItsOnlyUserReleasedAsksTheManagerWhichCancelsTheLoad() {
        var bench = Bench { $0.finishLoadingWithoutUsers = false }
        var user: RecordingUser<DataDecoder>? = Self.user("a")
        _ = bench.manage(user!)
        let fetch = bench.state.fetches[bench.key("a").dataKey]!
        user = nil  // released without `unmanage`: held weakly, nothing told the manager
        let (deliveries, usersReleased) = fetch.audience.progressed(LoadProgress(receivedBytes: 10, expectedBytes: nil))
        #expect(deliveries.isEmpty)
        #expect(usersReleased)
        let work = bench.core.decide(
            .fetchUsersReleased(dataKey: fetch.dataKey, fetch: fetch.identifier), at: Bench.now, in: &bench.state
        ).work
        #expect(bench.phase("a") == .new)
        #expect(Self.cancelledFetches(work) == 1)
        #expect(work.deliveries.isEmpty)
        // Told once: the listener is gone, the next report asks nothing.
        #expect(!fetch.audience.progressed(LoadProgress(receivedBytes: 20, expectedBytes: nil)).usersReleased)
    }

    @Test func bytesTheFetchsTaskDecodedAreDeliveredInTheSectionThatEndsTheFetch() {
        var bench = Bench()
        let user = Self.user("a")
        _ = bench.manage(user)
        let subscribers = bench.state.fetches[bench.key("a").dataKey]!.audience.decodingStarts()
        #expect(subscribers.map(\.key) == [bench.key("a")], "the task knows whom it decodes for")
        let (work, jobs) = bench.fetchEnds("a", .success(Self.bytes()), decoded: [bench.key("a"): .success(Data("payload".utf8))])
        #expect(jobs.isEmpty)
        #expect(Self.delivered(work) == ["ready(network)"])
        #expect(bench.phase("a") == .ready)
        #expect(bench.core.memoryCache.contains(bench.key("a")))
        #expect(bench.state.statistics.decodes == 1)
    }

    @Test func aLoadWhoseBytesAreBeingDecodedLeavesAFullBufferWithoutBeingCancelled() {
        var bench = Bench(loadingBufferSize: 2)
        let users = ["a", "b", "c"].map(Self.user)
        _ = bench.manage(users[0])
        _ = bench.manage(users[1])
        // A's download is over: its task decodes the bytes, before the section that ends the fetch.
        #expect(bench.state.fetches[bench.key("a").dataKey]!.audience.decodingStarts().map(\.key) == [bench.key("a")])
        let work = bench.manage(users[2])
        #expect(work.deliveries.isEmpty)
        #expect(Self.cancelledFetches(work) == 0)
        #expect(bench.phase("a") == .loading)
        #expect(bench.state.loadingBuffer.keys == [bench.key("b"), bench.key("c")])
        let (end, jobs) = bench.fetchEnds("a", .success(Self.bytes()), decoded: [bench.key("a"): .success(Data("payload".utf8))])
        #expect(jobs.isEmpty)
        #expect(Self.delivered(end) == ["ready(network)"])
    }
}
