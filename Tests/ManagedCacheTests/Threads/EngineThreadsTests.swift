import Dispatch
import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// The engine's threads (`EngineThreads`): a fixed number whatever the load, named so a thread
/// list shows whose they are, and no job of theirs waiting for a job queued behind it.
@Suite struct EngineThreadsTests {
    /// Jobs of a burst: how many run at once, and how many finished.
    final class Burst: Sendable {
        private struct State {
            var running = 0
            var peakRunning = 0
            var finished = 0
            var open = false
        }

        private let state = Lock(State())

        func begin() {
            state.withLock { state in
                state.running += 1
                state.peakRunning = max(state.peakRunning, state.running)
            }
        }

        func end() {
            state.withLock { state in
                state.running -= 1
                state.finished += 1
            }
        }

        func open() { state.withLock { $0.open = true } }
        var isOpen: Bool { state.withLock { $0.open } }
        var running: Int { state.withLock { $0.running } }
        var peakRunning: Int { state.withLock { $0.peakRunning } }
        var finished: Int { state.withLock { $0.finished } }
    }

    /// The engine's threads now, by name with their nice values, from the kernel's list (`nil`
    /// where there is no `/proc`). Only the threads the engine started: one that a worker
    /// started (a test's thread per job, say) has the worker's name too.
    static func engineThreads() -> [(name: String, nice: Int)]? {
        #if os(Linux)
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        let engine = Set(EngineThreads.threadIdentifiers)
        return tasks.compactMap { task -> (name: String, nice: Int)? in
            guard
                Int(task).map(engine.contains) == true,
                let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines),
                let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let afterName = stat.range(of: ") ", options: .backwards)
            else { return nil }
            // Fields after the name start at the third; the nice value is the 19th.
            let fields = stat[afterName.upperBound...].split(separator: " ")
            return (name, fields.count > 16 ? Int(fields[16]) ?? 0 : 0)
        }
        #else
        return nil
        #endif
    }

    static func engineThreadNames() -> [String]? { engineThreads()?.map(\.name) }

    /// The main thread's nice value (Linux).
    static var mainThreadNice: Int {
        #if os(Linux)
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return 0 }
        let fields = stat[afterName.upperBound...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) ?? 0 : 0
        #else
        return 0
        #endif
    }

    @Test func aBurstOfBlockingWorkStaysOnTheEnginesFixedThreads() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("EngineThreads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let burst = Burst()
        let bytes = Data(repeating: 7, count: 64 << 10)
        // Each job blocks: on the gate first (held until the workers are all taken, or a while),
        // then on real file I/O, written through to the disk and read back.
        @Sendable func blockingJob(_ index: Int) {
            burst.begin()
            defer { burst.end() }
            _ = waitUntilBlocking(timeout: 5) { burst.isOpen }
            let file = directory.appendingPathComponent("\(index)")
            guard FileManager.default.createFile(atPath: file.path, contents: nil),
                let handle = try? FileHandle(forWritingTo: file)
            else { return }
            try? handle.write(contentsOf: bytes)
            try? handle.synchronize()
            try? handle.close()
            _ = try? Data(contentsOf: file)
        }
        let loads = 64
        let handOffs = 32
        for index in 0..<loads { LoadingTask.start { blockingJob(index) } }
        for index in 0..<handOffs { CallerHandOff.queue.async { blockingJob(loads + index) } }
        DeadlineTimer.shared.run(after: 0) {}
        // The workers fill up (other tests' jobs may hold some of them), then no more start.
        _ = await waitUntil(timeout: 1) { burst.running == EngineThreads.workerCount }
        let namesWhileBlocked = Self.engineThreadNames()
        #expect(burst.running <= EngineThreads.workerCount)
        burst.open()
        #expect(await waitUntil { burst.finished == loads + handOffs })
        #expect(burst.peakRunning <= EngineThreads.workerCount)
        #expect(burst.peakRunning >= 1)
        if let namesWhileBlocked {
            let names = Self.engineThreadNames() ?? []
            #expect(EngineThreads.threadIdentifiers.count <= EngineThreads.bound, "started \(EngineThreads.threadIdentifiers)")
            for sample in [namesWhileBlocked, names] {
                #expect(sample.count <= EngineThreads.bound, "\(sample)")
                #expect(sample.filter { $0.hasPrefix("MCache.worker-") }.count <= EngineThreads.workerCount, "\(sample)")
                #expect(Set(sample).count == sample.count, "each engine thread has a name of its own: \(sample)")
            }
            #expect(names.contains("MCache.worker-1"), "\(names)")
            #expect(names.contains("MCache.timer"), "\(names)")
            // Utility priority, as libdispatch gives its utility workers; the starter the process's.
            let base = Self.mainThreadNice
            for thread in Self.engineThreads() ?? [] {
                #expect(thread.nice == base + (thread.name == "MCache.starter" ? 0 : 2), "\(thread)")
            }
        }
    }

    @Test func workWaitingForTheTimerOrTheStarterFinishesWhileItHoldsEveryWorker() async {
        // More waiting jobs than workers: each waits for an action it queued on a thread outside
        // the pool. Were the timer or the starter a job of the pool, the waits would hold every
        // worker and the actions would never run. Each waits up to `waitBound`: the starter is
        // every loader's of the process, and other tests' loads may keep it waiting for
        // FoundationNetworking for seconds (10 s was once too short under AddressSanitizer).
        let count = EngineThreads.workerCount + 2
        let finished = Lock(0)
        for index in 0..<count {
            CallerHandOff.queue.async {
                let signal = DispatchSemaphore(value: 0)
                if index.isMultiple(of: 2) {
                    DeadlineTimer.shared.run(after: 0.01) { signal.signal() }
                } else {
                    EngineThreads.starter.async { signal.signal() }
                }
                if signal.wait(timeout: .now() + waitBound) == .success { finished.withLock { $0 += 1 } }
            }
        }
        #expect(await waitUntil { finished.withLock { $0 } == count })
    }

    @Test func aPoolRunsItsJobsInTheOrderTheyWereQueued() async {
        let pool = ThreadPool(name: "test.pool", threadCount: 1)
        let order = Lock<[Int]>([])
        for index in 0..<500 { pool.async { order.withLock { $0.append(index) } } }
        #expect(await waitUntil { order.withLock { $0.count } == 500 })
        #expect(order.withLock { $0 } == Array(0..<500))
        #expect(pool.startedCount == 1)
    }

    @Test func aSerialLaneRunsOneJobAtATimeInOrderOnTheWorkers() async {
        let lane = SerialLane()
        let order = Lock<[Int]>([])
        let running = Lock(0)
        let overlapped = Lock(false)
        for index in 0..<500 {
            lane.async {
                if running.withLock({ value -> Bool in
                    value += 1
                    return value > 1
                }) {
                    overlapped.withLock { $0 = true }
                }
                order.withLock { $0.append(index) }
                running.withLock { $0 -= 1 }
            }
        }
        #expect(await waitUntil { order.withLock { $0.count } == 500 })
        #expect(order.withLock { $0 } == Array(0..<500))
        #expect(!overlapped.withLock { $0 })
    }
}
