import ChildProcesses
import Foundation
import HeapProbe
import ManagedCacheLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `URLSession` itself leaves on the C heap per request, measured over the same server: the
/// soak's baseline for its memory check.
///
/// Why: FoundationNetworking as shipped with Swift 6.3.1 on Linux loses a few allocations on every
/// request (`CFURLSessionCurlHostIsEqual`, called by `_EasyHandle.set(url:)`, frees libcurl's
/// parsed URL with `curl_free` instead of `curl_url_cleanup`, so the URL's parts stay allocated;
/// fixed upstream in swift-corelibs-foundation by PR #5498). No client of `URLSession` can avoid
/// it, and Apple's `URLSession` does not have it. The soak measures it here rather than assuming
/// a figure, and reports the engine's growth beside it.
///
/// The probe runs in a child process (this program, started with `--probe`), as the server does:
/// it measures Foundation, not the app, and its raw `URLSession` tasks driven from
/// `concurrentPerform` leave libdispatch workers behind (default-QoS ones for the four lanes,
/// overcommit ones for FoundationNetworking's queues, background-QoS ones for the ephemeral
/// session's `URLCache`) that lingered into the soak's phase and its thread counts. The leak is
/// per task and the same in any process of the same platform; the C heap is measured in the child.
enum URLSessionLeakProbe {
    /// C-heap bytes kept per task: for tasks that run to their end, and for tasks cancelled
    /// while they run (the soak cancels about one in ten of its loads: pushed out of the loading
    /// buffer, or their users gone).
    struct Leak {
        var perCompletedTask: Double
        var perCancelledTask: Double

        /// The bytes `completed` and `cancelled` tasks keep.
        func bytes(completed: Int, cancelled: Int) -> Int {
            Int(max(0, perCompletedTask) * Double(completed) + max(0, perCancelledTask) * Double(cancelled))
        }
    }

    /// What plain `URLSession` tasks for `paths` (round robin, four at a time, as the soak's
    /// threads) keep on the C heap, or `nil` where the C library cannot tell (not glibc).
    static func measure(port: Int, paths: [String], tasks: Int) -> Leak? {
        guard heap_probe_bytes_in_use() >= 0, !paths.isEmpty else { return nil }
        let ends = TaskEnds()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: ends, delegateQueue: queue)
        defer { session.invalidateAndCancel() }
        // Tasks to cancel go to routes that stall after their first bytes, so they are still
        // running when cancelled: a task whose end the session is delivering meanwhile may stop
        // the process when cancelled (FoundationNetworking's race, see the Reliability article).
        let stalled = (0..<8).map(SoakRoutes.stalledProbePath)
        /// Runs `count` tasks on four threads; `cancelAfter`: each goes to a stalled route and is
        /// cancelled that long after its start, in microseconds (nil: runs to its end).
        func run(_ count: Int, from offset: Int, cancelAfter: UInt32?) {
            DispatchQueue.concurrentPerform(iterations: 4) { lane in
                for index in stride(from: lane, to: count, by: 4) {
                    let done = DispatchSemaphore(value: 0)
                    let routes = cancelAfter == nil ? paths : stalled
                    let task = session.dataTask(with: SoakServer.url(port: port, routes[(offset + index) % routes.count]))
                    ends.expect(task, done)
                    task.resume()
                    if let cancelAfter {
                        usleep(cancelAfter)
                        // On the delegate queue, as the engine's loader does on Linux.
                        queue.addOperation {
                            guard ends.isWaiting(for: task), task.state != .completed else { return }
                            task.cancel()
                            _ = task.priority  // waits for the session's work queue, as the loader does
                        }
                    }
                    done.wait()
                }
            }
        }
        func perTask(_ count: Int, from offset: Int, cancelAfter: UInt32?) -> Double {
            let before = heap_probe_bytes_in_use()
            run(count, from: offset, cancelAfter: cancelAfter)
            return Double(heap_probe_bytes_in_use() - before) / Double(count)
        }
        run(200, from: 0, cancelAfter: nil)  // connections, buffers and caches set up once
        run(40, from: 200, cancelAfter: 1_000)
        let completed = perTask(tasks, from: 240, cancelAfter: nil)
        let cancelled = perTask(tasks / 3, from: 240 + tasks, cancelAfter: 1_000)
        return Leak(perCompletedTask: completed, perCancelledTask: cancelled)
    }
}

extension URLSessionLeakProbe {
    /// Runs `measure` in a child process over `server`'s ok keys of `keyCount`; `nil` when the
    /// child cannot tell (not glibc) or fails.
    static func measureInChild(server: SoakServer, keyCount: Int, tasks: Int) -> Leak? {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        guard
            let child = try? SpawnedProcess(
                executable: executable, arguments: ["--probe", String(server.port), String(keyCount), String(tasks)],
                standardOutput: .pipe)
        else { return nil }
        let output = String(decoding: child.readOutputToEnd(), as: UTF8.self)
        child.waitUntilExit()
        let words = output.split(whereSeparator: \.isWhitespace)
        guard child.terminationStatus == 0, words.count == 3, words[0] == "leak",
            let completed = Double(words[1]), let cancelled = Double(words[2])
        else { return nil }
        return Leak(perCompletedTask: completed, perCancelledTask: cancelled)
    }

    /// The child's life, when this program was started with `--probe <port> <keys> <tasks>`:
    /// measures, prints `leak <bytes per task that ends> <bytes per task cancelled>` (or `leak
    /// n/a`) and exits.
    static func probeIfAsked(_ arguments: [String]) {
        guard arguments.first == "--probe", arguments.count == 4, let port = Int(arguments[1]), let keyCount = Int(arguments[2]),
            let tasks = Int(arguments[3])
        else { return }
        let paths = (0..<keyCount).filter { SoakRoutes.kind(ofKey: $0) == .ok }.map { "/k/\($0)" }
        let leak = measure(port: port, paths: paths, tasks: tasks)
        let line = leak.map { "leak \($0.perCompletedTask) \($0.perCancelledTask)\n" } ?? "leak n/a\n"
        FileHandle.standardOutput.write(Data(line.utf8))
        exit(0)
    }
}

/// The probe's session delegate: signals each task's semaphore when the session delivers its end
/// (on the delegate queue).
private final class TaskEnds: NSObject, URLSessionDataDelegate, Sendable {
    private let waiting = Lock<[Int: DispatchSemaphore]>([:])

    func expect(_ task: URLSessionTask, _ done: DispatchSemaphore) {
        waiting.withLock { $0[task.taskIdentifier] = done }
    }

    func isWaiting(for task: URLSessionTask) -> Bool {
        waiting.withLock { $0[task.taskIdentifier] != nil }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        waiting.withLock { $0.removeValue(forKey: task.taskIdentifier) }?.signal()
    }
}
