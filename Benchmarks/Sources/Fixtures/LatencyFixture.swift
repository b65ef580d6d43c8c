import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking

/// The manager of one latency phase and its prepared keys: 60 objects in memory, 20 remembered
/// failures, a file cache holding an entry for each file-cache call to come (each read once, so it
/// stays a file-cache hit), and new URLs for the rest.
final class LatencyFixture {
    let manager: ObjectManager
    private let directory: ScratchDirectory
    private let server: LoopbackServer
    private let decoder = PayloadDecoder()
    private let hot: [ObjectRequest]
    private let failing: [ObjectRequest]
    private let filed: [ObjectRequest]
    private let fileCache: FileCache
    private var nextNew = 0
    /// Numbers the phases, so each one's keys are new to the server's routes and the caches.
    private let phase: Int
    private static let phases = Lock<Int>(0)

    static let hotCount = 60
    static let failingCount = 20

    /// `rateLimited`: whether the manager keeps the default `LoadRateLimit` (else none).
    /// `faults`: failures are remembered for 0.2 s only (first interval and cap), so a failing
    /// key the background asks for again fails again moments before the measured thread's call.
    init(server: LoopbackServer, calls: Int, rateLimited: Bool = true, faults: Bool = false) throws {
        let phase = Self.phases.withLock {
            $0 += 1
            return $0
        }
        self.phase = phase
        self.server = server
        directory = try ScratchDirectory(prefix: "latency")
        let fileCache = try FileCache(directory: directory.url)
        self.fileCache = fileCache
        var configuration = ObjectManager.Configuration()
        configuration.memoryCacheCountLimit = 2_000
        configuration.fileCache = fileCache
        configuration.policy.fileCacheDelivery = .synchronous
        if !rateLimited { configuration.loadRateLimit = nil }
        if faults {
            configuration.policy.failureMemoryFirstInterval = 0.2
            configuration.policy.failureMemoryInterval = 0.2
        }
        manager = ObjectManager(configuration: configuration)
        hot = (0..<Self.hotCount).map { ObjectRequest(url: server.url("/ok/\(phase * 1_000 + $0)")) }
        failing = (0..<Self.failingCount).map { ObjectRequest(url: server.url("/missing/\(phase * 1_000 + $0)")) }
        filed = (0..<(calls / 10 + 10)).map { ObjectRequest(url: server.url("/ok/\(phase * 100_000 + 10_000 + $0)")) }
        for (index, request) in filed.enumerated() {
            try fileCache.store(
                LatencyServer.body(phase * 100_000 + 10_000 + index), forKey: request.dataKey,
                metadata: FileCacheMetadata(contentType: "application/octet-stream"))
        }
        try prepare()
    }

    /// Loads the hot objects into memory and makes the failing keys fail once.
    private func prepare() throws {
        let users = (hot + failing).map { ObjectUser(request: $0, decoder: decoder) }
        let deadline = Date().addingTimeInterval(30)
        func finished(_ user: ObjectUser<PayloadDecoder>) -> Bool {
            switch user.phase {
            case .ready, .failed: return true
            default: return false
            }
        }
        // In batches smaller than the loading buffer, so none is pushed out.
        for start in stride(from: 0, to: users.count, by: 8) {
            let batch = users[start..<min(start + 8, users.count)]
            batch.forEach(manager.manage)
            while !batch.allSatisfy(finished), Date() < deadline { usleep(2_000) }
        }
        guard users.prefix(hot.count).allSatisfy({ $0.object != nil }) else { throw BenchmarkFailure("hot objects did not load") }
    }

    func tearDown() { manager.cancelAll() }

    /// What the background of a fault phase works on: the measured thread's failing keys, and the
    /// file cache it trims.
    var faultTargets: BackgroundMix.FaultTargets { .init(failing: failing, fileCache: fileCache) }

    /// The measured thread: 24 reusable cells configured 10 per "frame", 2 ms apart.
    func measure(calls: Int) -> LatencyTimings {
        var random = SeededGenerator(seed: 20)
        let cells = (0..<24).map { _ in LatencyCell(decoder: decoder) }
        let floor = LockedDictionary<Int, Int>(Dictionary(uniqueKeysWithValues: (0..<300).map { ($0, $0) }))
        var timings = LatencyTimings()
        var files = filed.makeIterator()
        for call in 0..<calls {
            let cell = cells[call % cells.count]
            let draw = Int(random.next() % 100)
            let request: ObjectRequest
            switch draw {
            case 0..<40: request = hot[Int(random.next() % UInt64(hot.count))]
            case 40..<50: request = failing[Int(random.next() % UInt64(failing.count))]
            case 50..<60: request = files.next() ?? newRequest()
            default: request = newRequest()
            }
            cell.prepare(request)
            let start = Stopwatch.now()
            manager.manage(cell)
            let end = Stopwatch.now()
            let hit = floor.value(forKey: call % 300)
            let floorEnd = Stopwatch.now()
            BlackHole.consume(hit)
            timings.byOutcome[cell.synchronousOutcome ?? .startedLoad, default: []].append(Double(end - start) / 1e6)
            timings.floor.append(Double(floorEnd - end) / 1e6)
            if call % 10 == 9 { usleep(2_000) }
        }
        cells.forEach(manager.unmanage)
        return timings
    }

    /// The machine's floor for a call as long as a load start, in the same conditions: `runs`
    /// of `CalibratedWork` on this thread, 10 per "frame" 2 ms apart like the calls. A pass of its
    /// own, after the calls: interleaved with them, the extra CPU of the measuring thread changed
    /// how often it was preempted, and with it the calls' own figures.
    func measureWorkFloor(runs: Int) -> [Double] {
        let work = CalibratedWork(microseconds: LatencyTimings.workMicroseconds)
        var times: [Double] = []
        times.reserveCapacity(runs)
        for run in 0..<runs {
            times.append(work.timed())
            if run % 10 == 9 { usleep(2_000) }
        }
        return times
    }

    private func newRequest() -> ObjectRequest {
        nextNew += 1
        let path = nextNew % 5 == 0 ? "/slow/" : "/ok/"
        return ObjectRequest(url: server.url(path + "\(phase * 100_000 + 50_000 + nextNew)"))
    }
}

/// A reusable cell that records what it was told on the thread that manages it, before `manage`
/// returned: that is the call's synchronous outcome.
final class LatencyCell: ManagedObjectUser {
    let objectDecoder: PayloadDecoder
    private let state = Lock<(request: ObjectRequest?, outcome: LatencyOutcome?, thread: pthread_t?)>((nil, nil, nil))

    init(decoder: PayloadDecoder) {
        objectDecoder = decoder
    }

    var objectRequest: ObjectRequest? { state.withLock { $0.request } }

    /// Points the cell at `request` on this thread and forgets the last outcome.
    func prepare(_ request: ObjectRequest) {
        state.withLock { $0 = (request, nil, pthread_self()) }
    }

    var synchronousOutcome: LatencyOutcome? { state.withLock { $0.outcome } }

    func managedObjectReady(_ object: Payload, origin: DataOrigin, request: ObjectRequest) {
        let outcome: LatencyOutcome
        switch origin {
        case .memory: outcome = .memoryHit
        case .sharedObject: outcome = .sharedObject
        case .fileCache: outcome = .fileCacheHit
        default: return
        }
        record(outcome)
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        if case .recentlyFailed = error { record(.rememberedFailure) }
    }

    private func record(_ outcome: LatencyOutcome) {
        let me = pthread_self()
        state.withLock { state in
            if let thread = state.thread, pthread_equal(thread, me) != 0, state.outcome == nil { state.outcome = outcome }
        }
    }
}

/// The background load of the loaded phase: threads managing users over their own keys (a fifth
/// dripped, a tenth 404), a third released at once, removals, memory pressure and prefetches.
final class BackgroundMix: Sendable {
    private let manager: ObjectManager
    private let server: LoopbackServer
    private let threads: Int
    private let stopFlag = Lock<Bool>(false)
    private let operations = Lock<Int>(0)
    private let group = DispatchGroup()
    private let faults: FaultTargets?

    /// The keys and cache a fault phase's background works on.
    struct FaultTargets: Sendable {
        let failing: [ObjectRequest]
        let fileCache: FileCache
    }

    /// `faults`: besides the usual mix, each round asks for two of the measured thread's failing
    /// keys (so they fail again as soon as their 0.2 s are over), a 503 and a reset, and every 25th
    /// round trims the file cache.
    init(manager: ObjectManager, server: LoopbackServer, threads: Int, faults: FaultTargets? = nil) {
        self.manager = manager
        self.server = server
        self.threads = threads
        self.faults = faults
    }

    func start() {
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread { [self] in
                run(seed: UInt64(thread + 1))
                group.leave()
            }
        }
        if threads > 0 { usleep(200_000) }  // the mix is under way before the first measured call
    }

    /// Stops the threads and returns the operations they made.
    func stop() -> Int {
        stopFlag.withLock { $0 = true }
        group.wait()
        return operations.withLock { $0 }
    }

    private func run(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let decoder = PayloadDecoder()
        var kept: [[ObjectUser<PayloadDecoder>]] = []
        var round = 0
        var count = 0
        while !stopFlag.withLock({ $0 }) {
            round += 1
            var users: [ObjectUser<PayloadDecoder>] = []
            for _ in 0..<8 {
                let key = Int(random.next() % 400)
                let path = key % 10 == 0 ? "/missing/" : key % 5 == 0 ? "/slow/" : "/ok/"
                let user = ObjectUser(request: ObjectRequest(url: server.url(path + "\(900_000 + key)")), decoder: decoder)
                manager.manage(user)
                if random.next() % 3 != 0 { users.append(user) }
            }
            count += 8
            if let faults {
                for _ in 0..<2 {
                    let request = faults.failing[Int(random.next() % UInt64(faults.failing.count))]
                    let user = ObjectUser(request: request, decoder: decoder)
                    manager.manage(user)
                    users.append(user)
                }
                for path in ["/unavailable/", "/reset/"] {
                    let user = ObjectUser(request: ObjectRequest(url: server.url(path + "\(900_000 + round)")), decoder: decoder)
                    manager.manage(user)
                    users.append(user)
                }
                if round % 25 == 0 { faults.fileCache.trim() }
                count += 5
            }
            kept.append(users)
            if kept.count > 3 { kept.removeFirst() }
            let other = ObjectRequest(url: server.url("/ok/\(900_000 + Int(random.next() % 400))"))
            manager.prefetch([other], decoder: decoder)
            if round % 20 == 0 { manager.removeObject(for: other, decoder: decoder) }
            if round % 100 == 0 { manager.handleMemoryPressure() }
            count += 1
            usleep(UInt32(2_000 + random.next() % 3_000))
        }
        operations.withLock { $0 += count }
    }
}

/// Arithmetic that takes about `microseconds` of CPU on this machine, calibrated when made: the
/// floor of a call that long with no lock in it. Timed on the measured thread, it shows how much
/// the machine alone (preemption by the other threads) stretches work of a `manage` call's length.
final class CalibratedWork {
    private var iterations = 1
    /// Where each run's result goes: a store the optimizer must keep, so the work is done, and
    /// done between the two clock readings.
    private var sink: UInt64 = 0

    init(microseconds: Double) {
        // Doubled until a round takes 1 ms, then the fastest of five such rounds, scaled: the rate
        // when nothing interrupts.
        var probe = 1_000
        while time(probe) < 1e6 { probe *= 2 }
        let fastest = (0..<5).map { _ in time(probe) }.min() ?? 1e6
        iterations = max(1, Int(Double(probe) * microseconds * 1_000 / fastest))
    }

    /// Runs the work once; its wall time in milliseconds.
    func timed() -> Double {
        time(iterations) / 1e6
    }

    /// Nanoseconds of `count` steps.
    private func time(_ count: Int) -> Double {
        let start = Stopwatch.now()
        sink &+= Self.run(count, seed: start)
        return Double(Stopwatch.now() - start)
    }

    /// `count` steps of a linear congruential generator from `seed`: each step waits for the last.
    @inline(never)
    private static func run(_ count: Int, seed: UInt64) -> UInt64 {
        var value = seed | 1
        for _ in 0..<count { value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
        return value
    }
}
