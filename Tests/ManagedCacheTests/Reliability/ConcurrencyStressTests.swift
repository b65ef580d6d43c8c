import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// Threads and tasks hammer one manager (with a `FileCache`) for a bounded time
/// with every public operation: manage, unmanage, re-manage for another key, prefetch with and
/// without a decoder, cancel prefetching, cancel everything, trim, memory pressure, remove
/// objects and caches, resize the loading buffer, `await` (sometimes cancelled), event streams
/// abandoned early, and users whose callbacks call back into the manager.
///
/// Checked: no crash (the process survives), no deadlock (every worker returns within a bound),
/// every tracked user (managed once for one request, never unmanaged) hears exactly one final
/// callback, and never another key's object; every `await` returns once; afterwards the manager
/// is idle and still works (loads and prefetches complete). The same test runs under
/// ThreadSanitizer in CI.
/// On two threads of its own (`.ownThreads`): its task workers would otherwise fill the
/// cooperative pool for the whole run, and the tasks of every test beside it wait.
@Suite(.ownThreads) struct ConcurrencyStressTests {
    static let keyCount = 48
    /// Each worker runs for at least this long and at least `minimumOperations` operations (so a
    /// slow machine, or ThreadSanitizer, makes the test longer, not thinner).
    static let duration: Double = 2.5
    static let minimumOperations = 1_000
    static let threadWorkers = 4
    static let taskWorkers = 4

    /// Answers `jitter://h/k<N>` with `v<N>` after up to 1 ms, or fails: 4 % transport errors,
    /// keys divisible by 11 with bytes `BlobDecoder` refuses.
    final class JitterLoader: DataLoading {
        let requests = Lock<Int>(0)

        func canLoad(_ url: URL) -> Bool { url.scheme == "jitter" }

        func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
            requests.withLock { $0 += 1 }
            let name = String(request.url.path.dropFirst())
            let number = Int(name.dropFirst()) ?? 0
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...1_000_000))
            if Int.random(in: 0..<100) < 4 { throw ManagedCacheError.transport(code: -1005, description: "connection lost") }
            let body = number % 11 == 0 ? Data("BAD \(name)".utf8) : Data("v\(number)".utf8)
            let response = DataLoadResponse(statusCode: 200, expectedContentLength: body.count, url: request.url)
            try receiver.didReceive(response: response)
            let middle = body.count / 2
            try receiver.didReceive(body.prefix(middle))
            try receiver.didReceive(body.suffix(from: middle))
            return response
        }
    }

    static func request(_ number: Int) -> ObjectRequest {
        ObjectRequest(url: URL(string: "jitter://h/k\(number)")!)
    }

    /// Everything the workers share.
    final class Shared: Sendable {
        let manager: ObjectManager
        let fileCache: FileCache
        let tracked = Lock<[(user: RecordingUser<BlobDecoder>, number: Int)]>([])
        let churn: [RecordingUser<BlobDecoder>]
        let operations = Lock<[String: Int]>([:])
        let awaits = Lock<Int>(0)
        let awaitsReturned = Lock<Int>(0)
        let deadline: Date

        init(manager: ObjectManager, fileCache: FileCache, deadline: Date) {
            self.manager = manager
            self.fileCache = fileCache
            self.deadline = deadline
            churn = (0..<32).map { _ in RecordingUser(ConcurrencyStressTests.request(0), decoder: BlobDecoder()) }
        }

        func count(_ operation: String) {
            operations.withLock { $0[operation, default: 0] += 1 }
        }
    }

    /// One random operation that needs no `await`.
    static func operate(_ shared: Shared, _ random: inout SplitMix) {
        let manager = shared.manager
        let number = Int(random.next() % UInt64(keyCount))
        switch random.next() % 1_000 {
        case 0..<380:
            // A tracked user: managed once, never unmanaged. Some call back into the manager; half
            // stay out of the loading buffer's reach, so loads also finish on a slow machine.
            let reentrant = random.next() % 4 == 0
            var overrides = PolicyOverrides()
            if random.next() % 2 == 0 { overrides.participatesInLoadingBuffer = false }
            let request = ObjectRequest(url: request(number).url, policy: overrides)
            let churnUser = shared.churn[Int(random.next() % UInt64(shared.churn.count))]
            let delivery: CallbackDelivery = random.next() % 8 == 0 ? .mainQueue : .immediate
            let user = RecordingUser(request, decoder: BlobDecoder(), delivery: delivery) { _ in
                if reentrant {
                    _ = manager.cachedObject(for: request, decoder: BlobDecoder())
                    _ = manager.statistics
                    manager.manage(churnUser)
                }
            }
            shared.tracked.withLock { $0.append((user, number)) }
            manager.manage(user)
            shared.count("manage (tracked)")
        case 380..<530:
            let user = shared.churn[Int(random.next() % UInt64(shared.churn.count))]
            user.setRequest(random.next() % 10 == 0 ? nil : request(number))
            manager.manage(user)
            shared.count("manage (reused user)")
        case 530..<600:
            manager.unmanage(shared.churn[Int(random.next() % UInt64(shared.churn.count))])
            shared.count("unmanage")
        case 600..<680:
            let requests = (0..<Int(1 + random.next() % 4)).map { _ in request(Int(random.next() % UInt64(keyCount))) }
            if random.next() % 2 == 0 {
                manager.prefetch(requests)
            } else {
                manager.prefetch(requests, decoder: BlobDecoder())
            }
            shared.count("prefetch")
        case 680..<700:
            manager.cancelPrefetching()
            shared.count("cancel prefetching")
        case 700..<702:
            manager.cancelAll()
            shared.count("cancel all")
        case 702..<740:
            shared.fileCache.trim()
            shared.count("trim file cache")
        case 740..<745:
            manager.handleMemoryPressure()
            shared.count("memory pressure")
        case 745..<760:
            manager.memoryCache.trim(toCount: Int(random.next() % 8), cost: 1 << 20)
            shared.count("trim memory cache")
        case 760..<790:
            manager.removeObject(for: request(number), decoder: BlobDecoder(), fromFileCache: random.next() % 2 == 0)
            shared.count("remove object")
        case 790..<795:
            manager.removeAllObjects()
            shared.count("remove all objects")
        case 795..<798:
            manager.removeAllCaches()
            shared.count("remove all caches")
        case 798..<830:
            manager.loadingBufferSize = random.next() % 8 == 0 ? 1 : Int(8 + random.next() % 41)
            shared.count("resize loading buffer")
        case 830..<850:
            manager.forgetAllFailures()
            shared.count("forget failures")
        default:
            _ = manager.cachedObject(for: request(number), decoder: BlobDecoder())
            _ = manager.statistics
            _ = manager.activeLoadCount
            _ = manager.bufferedLoadKeys
            shared.count("read state")
        }
    }

    /// One random operation of a task: mostly the synchronous ones, plus `await` and streams.
    static func operateAsync(_ shared: Shared, _ random: inout SplitMix) async {
        let manager = shared.manager
        let number = Int(random.next() % UInt64(keyCount))
        switch random.next() % 10 {
        case 0..<2:
            shared.awaits.withLock { $0 += 1 }
            let cancelAfter = Int(random.next() % 3_000)
            let call = Task {
                do {
                    let blob = try await manager.object(for: request(number), decoder: BlobDecoder())
                    if blob.text != "v\(number)" { shared.count("WRONG await object") }
                } catch {}
                shared.awaitsReturned.withLock { $0 += 1 }
            }
            if cancelAfter < 1_000 {
                try? await Task.sleep(nanoseconds: UInt64(cancelAfter) * 1_000)
                call.cancel()
                shared.count("await (cancelled)")
            } else {
                shared.count("await")
            }
        case 2:
            let stream = manager.loadEvents(for: request(number), decoder: BlobDecoder())
            do {
                for try await event in stream {
                    if case .object(let blob, _) = event, blob.text != "v\(number)" { shared.count("WRONG stream object") }
                    break  // abandon the stream after its first event
                }
            } catch {}
            shared.count("event stream")
        default:
            operate(shared, &random)
        }
    }

    @Test func everyOperationAtOnceNeverCrashesDeadlocksOrLosesACallback() async throws {
        let tally = ReliabilityTally(item: "concurrency")
        let directory = TemporaryDirectory(prefix: "reliability-concurrency")
        let fileCache = try FileCache(directory: directory.url, configuration: .init(countLimit: 30))
        let loader = JitterLoader()
        var configuration = ObjectManager.Configuration()
        configuration.dataLoader = loader
        configuration.fileCache = fileCache
        configuration.memoryCacheCountLimit = 12
        configuration.loadingBufferSize = 24
        configuration.policy.retry = .none
        configuration.policy.failureMemoryInterval = 0.05
        // An idle timeout only a hang could reach: the loader answers within a millisecond, so a
        // load that goes silent for the default 30 s is one whose task did not get a thread (on a
        // loaded machine it did not, and five users were told `.timedOut`). A hang still fails
        // the quiescence check below.
        configuration.policy.timeout = 600
        let manager = ObjectManager(configuration: configuration)
        let shared = Shared(manager: manager, fileCache: fileCache, deadline: Date().addingTimeInterval(Double(Self.duration)))

        // Plain threads and Swift tasks at the same time.
        let threadsDone = Lock<Int>(0)
        for worker in 0..<Self.threadWorkers {
            Thread.detachNewThread {
                var random = SplitMix(state: UInt64(worker + 1))
                var done = 0
                while Date() < shared.deadline || done < Self.minimumOperations {
                    Self.operate(shared, &random)
                    done += 1
                }
                threadsDone.withLock { $0 += 1 }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<Self.taskWorkers {
                group.addTask {
                    var random = SplitMix(state: UInt64(100 + worker))
                    var done = 0
                    while Date() < shared.deadline || done < Self.minimumOperations {
                        await Self.operateAsync(shared, &random)
                        done += 1
                        // Most operations never suspend: the yield lets the other workers, and
                        // the tasks the operations start, take turns on the suite's threads.
                        await Task.yield()
                    }
                }
            }
        }
        let workersReturned = await waitUntil { threadsDone.withLock { $0 } == Self.threadWorkers }
        tally.check(workersReturned, "workers", "a worker thread did not return within \(waitBound) s: a deadlock")

        // Quiescence: every load ends, every tracked user and every await hears its outcome.
        let tracked = shared.tracked.withLock { $0 }
        let quiet = await waitUntil {
            manager.activeLoadCount == 0 && shared.awaitsReturned.withLock { $0 } == shared.awaits.withLock { $0 }
                && tracked.allSatisfy { $0.user.finalCallbackCount >= 1 }
        }
        let silent = tracked.filter { $0.user.finalCallbackCount == 0 }
        tally.check(
            quiet, "quiescence",
            "after \(waitBound) s: \(manager.activeLoadCount) loads running, "
                + "\(silent.count) tracked users never told (keys \(Set(silent.map(\.number)).sorted().prefix(10))), "
                + "\(shared.awaits.withLock { $0 } - shared.awaitsReturned.withLock { $0 }) awaits pending")
        // Late callbacks (decodes finishing after their fetch, main-queue deliveries) have had
        // every chance to arrive before the counts are checked: a second final callback fails.
        try? await Task.sleep(nanoseconds: 300_000_000)
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }

        tally.add(tracked.count, to: "tracked users")
        var wrongObjects = 0
        var extraCallbacks = 0
        for (index, entry) in tracked.enumerated() {
            let name = "tracked user \(index)"
            tally.addCase(name)
            let user = entry.user
            if user.finalCallbackCount > 1 { extraCallbacks += 1 }
            tally.check(
                user.finalCallbackCount == 1, name,
                "key k\(entry.number): \(user.finalCallbackCount) final callbacks: \(user.events.map(Self.describe))")
            for object in user.objects where object.text != "v\(entry.number)" {
                wrongObjects += 1
                tally.check(false, name, "key k\(entry.number) received \(object.text)")
            }
            if !user.objects.isEmpty { tally.add(1, to: "tracked users served") }
            if user.errors.contains(where: { if case .cancelled = $0 { return true } else { return false } }) {
                tally.add(1, to: "tracked users cancelled")
            }
            for error in user.errors {
                tally.check(Self.isExpected(error, number: entry.number), name, "unexpected error \(error)")
            }
        }
        let operations = shared.operations.withLock { $0 }
        tally.check(operations.keys.allSatisfy { !$0.hasPrefix("WRONG") }, "awaits", "an await or a stream got another key's object")

        // The manager is idle and still works.
        tally.check(manager.bufferedLoadKeys.isEmpty, "afterwards", "keys left in the loading buffer: \(manager.bufferedLoadKeys)")
        manager.forgetAllFailures()
        manager.loadingBufferSize = 64
        let fresh = (1..<Self.keyCount).filter { $0 % 11 != 0 }.map { RecordingUser(Self.request($0), decoder: BlobDecoder()) }
        for user in fresh { manager.manage(user) }
        let healthy = await waitUntil { fresh.allSatisfy { $0.finalCallbackCount >= 1 } }
        let recovered = fresh.filter { $0.objects.first?.text == "v\(Int($0.objectRequest!.url.path.dropFirst(2))!)" }.count
        tally.check(
            healthy && recovered >= fresh.count * 8 / 10, "afterwards",
            "after the storm \(recovered) of \(fresh.count) loads succeeded (4 % fail by design)")
        manager.removeAllObjects()
        manager.prefetch([ObjectRequest(url: URL(string: "jitter://h/k1")!, oid: "prefetch-after-the-storm")], decoder: BlobDecoder())
        // Every prefetch ends (this one and any the storm left running): none is stuck.
        let prefetched = await waitUntil { manager.pendingPrefetchCount == 0 }
        tally.check(prefetched, "afterwards", "prefetching is stuck after the storm")

        let total = operations.values.reduce(0, +)
        tally.add(total, to: "operations")
        tally.add(shared.awaits.withLock { $0 }, to: "awaits")
        tally.add(loader.requests.withLock { $0 }, to: "loads")
        tally.add(extraCallbacks, to: "users with extra callbacks")
        tally.add(wrongObjects, to: "wrong objects")
        tally.report()
        print(
            "reliability: concurrency: operations by kind: "
                + operations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(tally.failureCount == 0)
    }

    /// The failures a tracked user may hear in this storm.
    static func isExpected(_ error: ManagedCacheError, number: Int) -> Bool {
        switch error {
        case .cancelled, .transport: return true
        case .decodingFailed: return number % 11 == 0
        case .recentlyFailed(let underlying): return isExpected(underlying, number: number)
        default: return false
        }
    }

    static func describe(_ event: RecordingUser<BlobDecoder>.Event) -> String {
        switch event {
        case .ready(let blob, let origin, _): return "ready(\(blob.text), \(origin))"
        case .failed(let error, _): return "failed(\(error))"
        case .progress: return "progress"
        }
    }
}
