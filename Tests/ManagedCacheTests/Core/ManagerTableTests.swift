import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// The manager's own tables stay bounded by what is alive, however users come and go.
/// Off the cooperative pool: these tests make thousands of synchronous `manage` calls each (50,000
/// in one), which under ThreadSanitizer kept the pool's threads for a minute and more, and the
/// tasks of the tests beside them did not start.
@Suite(.offCooperativePool) struct ManagerTableTests {
    @Test func usersDeallocatedWithoutUnmanagingDoNotAccumulateInTheManager() async {
        let loader = ScriptedDataLoader()
        loader.script("shared", .body(Data("S".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let first = RecordingUser(request("shared"), decoder: BlobDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.objects.count == 1 })

        // Rounds of 5,000 views of one key, alive together, then all released without
        // `unmanage`, as views are. One key means one handler: only the users' records could pile
        // up. The tables are swept in amortized time, so they may hold up to about twice the most
        // users alive at once, but no more however many rounds go by.
        let perRound = 5_000
        let rounds = 10
        var largest = (attachments: 0, listed: 0)
        for _ in 0..<rounds {
            var users = (0..<perRound).map { _ in RecordingUser(request("shared"), decoder: BlobDecoder()) }
            for user in users { manager.manage(user) }
            #expect(users.allSatisfy { $0.origins == [.memory] })
            users.removeAll()
            let sizes = manager.state.withLock { state in
                (state.attachments.count, state.handlers.values.reduce(0) { $0 + Array($1.users).count })
            }
            largest = (max(largest.attachments, sizes.0), max(largest.listed, sizes.1))
        }
        #expect(largest.attachments <= 2 * perRound + 64)
        #expect(largest.listed <= 2 * perRound + 64)
        #expect(loader.requestCount("shared") == 1)
    }

    /// The table of users hashes an address without a `Hasher` (`UserKey`): the lowest bits the
    /// table's buckets read still spread, though every address ends in zero bits. Random hashes
    /// would fill about 1,005 of the 1,024 buckets (the multiplication alone filled 865).
    @Test func usersKeysSpreadOverTheTablesBuckets() {
        let objects = (0..<4_096).map { _ in NSObject() }
        for seed in [0, 0x5EED] {
            let buckets = Set(objects.map { UserKey(ObjectIdentifier($0))._rawHashValue(seed: seed) & 1_023 })
            #expect(buckets.count > 950, "\(buckets.count) of 1,024 buckets for 4,096 objects, seed \(seed)")
        }
    }

    @Test func handlersOfKeysWhoseUsersWentAwayDoNotAccumulate() {
        // The memory cache keeps two rounds' keys: a handler nobody uses stays idle while its key
        // is there (`LoadCore._idleIfTheMemoryCacheHoldsItsObject`), and goes once it is evicted.
        let memoryCount = 1_000
        let manager = makeScriptedManager(loader: ScriptedDataLoader(), memoryCount: memoryCount)
        let decoder = BlobDecoder()
        let object = Blob(Data("in memory".utf8))
        // Rounds of 500 views, each of its own key (a memory hit), alive together, then released
        // without `unmanage`: each leaves a handler nobody uses, 10,000 in all.
        let perRound = 500
        let rounds = 20
        var largest = 0
        for round in 0..<rounds {
            let requests = (0..<perRound).map { request("round\(round)/\($0)") }
            for request in requests {
                let key = ObjectKey(dataKey: request.dataKey, variant: decoder.identifier)
                manager.memoryCache.setValue(CachedObject(object: object, freshness: nil, cost: 1), forKey: key, cost: 1)
            }
            var users = requests.map { RecordingUser($0, decoder: decoder) }
            for user in users { manager.manage(user) }
            #expect(users.allSatisfy { $0.origins == [.memory] })
            users.removeAll()
            largest = max(largest, manager.state.withLock { $0.handlers.count })
        }
        // A sweep leaves the handlers of live users and of keys in memory; the next begins at
        // 3/4 of twice that.
        #expect(largest <= 2 * (perRound + memoryCount) + TableSweep.floor)
    }

    /// The `manage` that finds a sweep due only schedules it: the tables are untouched until the
    /// background sweep runs, which examines a few entries per section and ends, unscheduled.
    @Test func aDueSweepIsScheduledAndRunsInSectionsOfItsOwn() {
        let manager = makeScriptedManager(loader: ScriptedDataLoader())
        let unused = 3 * TableSweep.floor / 4  // 48 handlers nobody uses: due, not behind
        manager.state.withLock { state in
            state.handlers = Self.handlersNobodyUses(unused)
            let sweptHere = manager.core._sweepIfBehind(in: &state)
            let scheduled = manager.core._scheduleSweepIfDue(in: &state)
            let scheduledAgain = manager.core._scheduleSweepIfDue(in: &state)
            #expect(sweptHere.isEmpty)
            #expect(scheduled)
            #expect(!scheduledAgain)  // scheduled once
            #expect(state.handlers.count == unused)
            #expect(state.sweep.isScheduled)
        }
        var sections = 0
        var finished = false
        while !finished, sections <= unused {
            let (before, step, after) = manager.state.withLock { state in
                (state.handlers.count, manager.core._backgroundSweepStep(in: &state), state.handlers.count)
            }
            sections += 1
            finished = step.finished
            #expect(before - after <= TableSweep.budget)
            #expect(step.retired.count == before - after)
        }
        #expect(finished)
        #expect(sections == (unused + TableSweep.budget - 1) / TableSweep.budget)
        manager.state.withLock { state in
            #expect(state.handlers.isEmpty)
            #expect(!state.sweep.isScheduled && !state.sweep.isSweeping)
        }
    }

    /// When the background sweep falls behind (tables at 7/8 of the threshold), each `_attach`
    /// examines a budget of entries itself until that sweep ends, so the tables stay bounded
    /// without the background.
    @Test func aSweepBehindIsHelpedByEachAttach() {
        let manager = makeScriptedManager(loader: ScriptedDataLoader())
        let unused = 7 * TableSweep.floor / 8
        manager.state.withLock { state in
            state.handlers = Self.handlersNobodyUses(unused)
            let scheduled = manager.core._scheduleSweepIfDue(in: &state)  // and never run here
            let sweptHere = manager.core._sweepIfBehind(in: &state)
            #expect(scheduled)
            #expect(sweptHere.count == TableSweep.budget)
            #expect(state.handlers.count == unused - TableSweep.budget)
            #expect(state.sweep.isSweeping)
            // Below 7/8 now, the attaches still help until that sweep ends, then stop.
            var helped = 1
            while state.sweep.isSweeping, helped <= unused {
                let swept = manager.core._sweepIfBehind(in: &state)
                #expect(swept.count <= TableSweep.budget)
                helped += 1
            }
            #expect(helped == (unused + TableSweep.budget - 1) / TableSweep.budget)
            #expect(state.handlers.isEmpty)
            let afterTheEnd = manager.core._sweepIfBehind(in: &state)
            #expect(afterTheEnd.isEmpty)
        }
    }

    /// Users come and go while `manage` runs: sweeps begin, run beside it and end, and the
    /// handlers left are bounded by the users alive.
    @Test func sweepsRunBesideManageAndEnd() async {
        let memoryCount = 200
        let manager = makeScriptedManager(loader: ScriptedDataLoader(), memoryCount: memoryCount)
        let decoder = BlobDecoder()
        let object = Blob(Data("in memory".utf8))
        var users: [RecordingUser<BlobDecoder>] = []
        var sawScheduled = false
        for index in 0..<2_000 {
            let request = request("sweep/\(index)")
            manager.memoryCache.setValue(
                CachedObject(object: object, freshness: nil, cost: 1),
                forKey: ObjectKey(dataKey: request.dataKey, variant: decoder.identifier), cost: 1)
            let user = RecordingUser(request, decoder: decoder)
            manager.manage(user)
            sawScheduled = sawScheduled || manager.state.withLock { $0.sweep.isScheduled }
            if index % 3 == 0 { users.append(user) }  // a third stay alive
        }
        #expect(sawScheduled)
        #expect(await waitUntil { manager.state.withLock { !$0.sweep.isScheduled && !$0.sweep.isSweeping } })
        #expect(manager.state.withLock { $0.handlers.count } <= 2 * (users.count + memoryCount) + TableSweep.floor)
    }

    /// A handler whose last user leaves stays in the table, idle and holding nothing, while the
    /// memory cache holds its object: the key's next memory hit finds it. The
    /// object lives as long as the memory cache keeps it, and the sweep drops the handler once
    /// the memory cache no longer holds the key.
    @Test func aHandlerWhoseObjectTheMemoryCacheHoldsIdlesHoldingNothing() async {
        let loader = ScriptedDataLoader()
        loader.script("probe", .body(Data("p".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let freed = Lock<(count: Int, underLock: Bool)>((0, false))
        let user = ForgetfulUser(request: request("probe"), decoder: LockProbeDecoder(manager: manager, freed: freed))
        manager.manage(user)
        #expect(await waitUntil { user.readyCount == 1 })
        manager.unmanage(user)
        let key = ObjectKey(dataKey: request("probe").dataKey, variant: "test.lock-probe")
        #expect(manager.state.withLock { $0.handlers[key]?.isIdle } == true)
        #expect(freed.withLock { $0.count } == 0)  // the memory cache holds it
        manager.manage(user)  // found idle: a memory hit, no load
        #expect(user.readyCount == 2)
        #expect(loader.requestCount("probe") == 1)
        manager.unmanage(user)
        manager.memoryCache.removeValue(forKey: key)
        // Nothing else held it: not the idle handler.
        #expect(await waitUntil { freed.withLock { $0.count } == 1 })
        #expect(freed.withLock { $0.underLock } == false)
        // Other users attach until a sweep has examined (and dropped) the idle handler.
        let others = manageOtherUsers(on: manager, while: { manager.state.withLock { $0.handlers[key] } != nil })
        #expect(await waitUntil { manager.state.withLock { $0.handlers[key] } == nil })
        withExtendedLifetime(others) {}
    }

    /// A handler idles only while the memory cache's entry is the very value its object came
    /// from or went into: a value object (`Data`) idles like an instance, and once the app has put
    /// another value under the key, the handler is dropped with its last user instead (its
    /// reference may be the object's last, freed after the lock).
    @Test func aHandlerIdlesOnlyWhileTheMemoryCacheHoldsItsVeryEntry() async {
        let loader = ScriptedDataLoader()
        loader.script("value", .body(Data("v".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let user = RecordingUser(request("value"), decoder: DataDecoder())
        let key = ObjectKey(dataKey: request("value").dataKey, variant: DataDecoder().identifier)
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        manager.unmanage(user)
        #expect(manager.state.withLock { $0.handlers[key]?.isIdle } == true)
        manager.manage(user)  // a memory hit on the idle handler
        #expect(user.origins == [.network, .memory])
        manager.memoryCache.setValue(CachedObject(object: Data("w".utf8), freshness: nil, cost: 1), forKey: key, cost: 1)
        manager.unmanage(user)
        #expect(manager.state.withLock { $0.handlers[key] } == nil)
    }

    /// Manages users of new keys, one at a time, while `condition` holds (up to four sweep
    /// thresholds' worth): each attach may schedule or help a sweep. Returns the users, for the
    /// caller to keep alive until its checks are over.
    private func manageOtherUsers(on manager: ObjectManager, while condition: () -> Bool) -> [RecordingUser<BlobDecoder>] {
        let decoder = BlobDecoder()
        var others: [RecordingUser<BlobDecoder>] = []
        for index in 0..<(4 * TableSweep.floor) where condition() {
            others.append(RecordingUser(request("other/\(index)"), decoder: decoder))
            manager.manage(others[others.count - 1])
        }
        return others
    }

    /// `count` handlers of their own keys, none loading, none used.
    private static func handlersNobodyUses(_ count: Int) -> [ObjectKey: ObjectHandler] {
        var handlers: [ObjectKey: ObjectHandler] = [:]
        for index in 0..<count {
            let request = ObjectRequest(url: URL(string: "https://example.com/unused/\(index)")!)
            let key = ObjectKey(dataKey: request.dataKey, variant: BlobDecoder().identifier)
            handlers[key] = ObjectHandler(key: key, decoder: AnyObjectDecoder(BlobDecoder()), request: request, policy: LoadPolicy())
        }
        return handlers
    }

    /// A handler dropped with its last user releases its object after the manager's lock: freeing a
    /// decoded object (a large image) must not hold up every other `manage`.
    @Test func anObjectOnlyADroppedHandlerHeldIsFreedAfterTheLock() async {
        let loader = ScriptedDataLoader()
        loader.script("probe", .body(Data("p".utf8)))
        let manager = makeScriptedManager(loader: loader) { $0.policy.cacheInMemory = false }
        let freed = Lock<(count: Int, underLock: Bool)>((0, false))
        let decoder = LockProbeDecoder(manager: manager, freed: freed)
        let user = ForgetfulUser(request: request("probe"), decoder: decoder)
        manager.manage(user)
        #expect(await waitUntil { user.readyCount == 1 })
        #expect(freed.withLock { $0.count } == 0)  // the handler holds it for its user
        manager.unmanage(user)  // the last user: the handler is dropped, and its object with it
        // Usually freed at once, by `unmanage`; or, when the loader's thread still held the
        // delivery it had just made, by that thread a moment later. Outside the lock either way.
        #expect(await waitUntil { freed.withLock { $0.count } == 1 })
        #expect(freed.withLock { $0.underLock } == false)
    }

    /// The object only a handler held is freed after the manager's lock when a sweep drops the
    /// handler too (its user went away without `unmanage`): the sweep hands the handler itself
    /// over (`PendingWork.retired`), and its object goes with it.
    @Test func aHandlerASweepDropsIsFreedAfterTheLock() async {
        let (manager, freed) = await managerHoldingAProbeNobodyUses()
        // Other users attach until a sweep has examined (and dropped) the probe's handler.
        let others = manageOtherUsers(on: manager, while: { freed.withLock { $0.count } == 0 })
        #expect(await waitUntil { freed.withLock { $0.count } == 1 })
        #expect(freed.withLock { $0.underLock } == false)
        #expect(manager.state.withLock { $0.handlers[ObjectKey(dataKey: request("probe").dataKey, variant: "test.lock-probe")] } == nil)
        withExtendedLifetime(others) {}
    }

    /// Memory pressure drops the handlers nobody uses; the objects only they held are freed after
    /// the manager's lock.
    @Test func anObjectMemoryPressureDropsIsFreedAfterTheLock() async {
        let (manager, freed) = await managerHoldingAProbeNobodyUses()
        manager.handleMemoryPressure()
        #expect(await waitUntil { freed.withLock { $0.count } == 1 })
        #expect(freed.withLock { $0.underLock } == false)
    }

    /// A manager (no memory cache) whose handler of "probe" holds a `LockProbe` that only it
    /// holds: its user loaded it and went away without `unmanage`. Returns the probe's record of
    /// being freed, not freed yet.
    private func managerHoldingAProbeNobodyUses() async -> (ObjectManager, Lock<(count: Int, underLock: Bool)>) {
        let loader = ScriptedDataLoader()
        loader.script("probe", .body(Data("p".utf8)))
        let manager = makeScriptedManager(loader: loader) { $0.policy.cacheInMemory = false }
        let freed = Lock<(count: Int, underLock: Bool)>((0, false))
        do {
            // Gone without `unmanage` at the end of this scope: its handler keeps the object.
            let user = ForgetfulUser(request: request("probe"), decoder: LockProbeDecoder(manager: manager, freed: freed))
            manager.manage(user)
            #expect(await waitUntil { user.readyCount == 1 })
        }
        #expect(freed.withLock { $0.count } == 0)
        return (manager, freed)
    }
}

/// An object that checks, when it is freed, whether the manager's lock is held: another thread
/// tries to take it, and a wait of 20 s without it means the freeing thread holds it (no hang either
/// way: the lock is released once the freeing returns).
private final class LockProbe: Sendable {
    let manager: ObjectManager
    let freed: Lock<(count: Int, underLock: Bool)>

    init(manager: ObjectManager, freed: Lock<(count: Int, underLock: Bool)>) {
        self.manager = manager
        self.freed = freed
    }

    deinit {
        let tookLock = DispatchSemaphore(value: 0)
        let manager = self.manager
        DispatchQueue.global().async {
            _ = manager.statistics
            tookLock.signal()
        }
        let underLock = tookLock.wait(timeout: .now() + 20) == .timedOut
        freed.withLock { $0 = ($0.count + 1, $0.underLock || underLock) }
    }
}

private struct LockProbeDecoder: ObjectDecoding {
    let manager: ObjectManager
    let freed: Lock<(count: Int, underLock: Bool)>
    var identifier: String { "test.lock-probe" }
    func decode(_ data: LoadedData) throws -> LockProbe { LockProbe(manager: manager, freed: freed) }
}

/// A user that counts its objects without keeping them.
private final class ForgetfulUser: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder: LockProbeDecoder
    private let ready = Lock(0)

    init(request: ObjectRequest, decoder: LockProbeDecoder) {
        objectRequest = request
        objectDecoder = decoder
    }

    var readyCount: Int { ready.withLock { $0 } }

    func managedObjectReady(_ object: LockProbe, origin: DataOrigin, request: ObjectRequest) {
        ready.withLock { $0 += 1 }
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {}
}
