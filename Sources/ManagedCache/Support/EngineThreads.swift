import Dispatch
import Foundation
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The engine's own threads: a fixed number for the whole process, whatever the load, each named
/// so that a thread list shows whose it is.
///
/// - `MCache.worker-1` … `-4` (`workers`): the loading executor's tasks (fetches, file-cache
///   reads and writes, decodes), `manage`'s hand-off (task creation, cancellations, releases),
///   table sweeps, previews, prefetch reports.
/// - `MCache.timer` (`DeadlineTimer.shared`): transfers' grace periods, load rate limits, the
///   downloads' idle timeouts.
/// - `MCache.starter` (`starter`, Linux only): creating and resuming `URLSessionTask`s.
///
/// Why threads of its own rather than dispatch queues: a concurrent queue whose blocks block (file
/// I/O, a lock, FoundationNetworking's work queue) makes libdispatch add a thread per blocked
/// block, and a serial queue holds an overcommit thread while it has work, so the engine's threads
/// grew with the load and the number of caches (up to 34–40 in the soak, 103 in a longer run).
/// A thread is started the first time it is needed and then kept, so the count only rises, to
/// `bound` at most.
///
/// Names are 15 bytes at most: Linux keeps no more (`pthread_setname_np` refuses a longer one).
///
/// No exhaustion: the workers run jobs first in, first out, and no job of the engine waits for
/// another job of the pool. A job blocks only on what progresses without the pool: file I/O, a
/// lock whose holder is running, a callback already running on another thread, a cache's opening
/// thread. The one wait that does depend on other queued work, `URLSession`'s task creation and
/// `resume()` on Linux (they wait for FoundationNetworking's process-wide work queue, which the
/// delegate queue's back-pressure can hold), runs on the starter thread instead, so a burst of
/// such waits holds one thread and no worker. Code the engine calls on a worker (a decoder, an
/// `.immediate` user's callbacks, a custom cache or loader) must not wait synchronously for
/// another load: four such waits would hold every worker.
package enum EngineThreads {
    /// What every engine thread's name starts with.
    package static let namePrefix = "MCache."
    /// How many worker threads run the engine's work.
    package static let workerCount = 4
    /// The most threads the engine runs at once: the workers, the timer thread and the starter.
    package static let bound = workerCount + 2
    /// The timer thread's name.
    static let timerName = "MCache.timer"

    /// The pool that runs the engine's work.
    static let workers = ThreadPool(name: "MCache.worker", threadCount: workerCount)
    /// The one thread that creates and resumes `URLSession` tasks on Linux, for every loader.
    /// At default priority, as the serial queue it replaces: loads wait for it.
    static let starter = ThreadPool(name: "MCache.starter", threadCount: 1, isUtility: false)

    /// Starts a thread named `name` at utility priority (`utility`) or the process's, running `body`.
    static func startThread(named name: String, utility: Bool, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            // The priority first: a thread with its name has its priority.
            setCurrentThreadPriority(utility: utility)
            nameCurrentThread(name)
            if name.hasPrefix(namePrefix) { recordCurrentThread() }
            body()
        }
        thread.qualityOfService = utility ? .utility : .default
        thread.start()
    }

    /// The kernel's identifiers of the engine's threads started so far (Linux; empty elsewhere),
    /// for the tests: a thread started by one of them has its name too (Linux copies it), so the
    /// names alone do not tell them apart.
    package static var threadIdentifiers: [Int] { started.withLock { $0 } }

    private static let started = Lock<[Int]>([])

    private static func recordCurrentThread() {
        #if os(Linux)
        // "<pid>/task/<tid>"
        guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"),
            let identifier = link.split(separator: "/").last.flatMap({ Int($0) })
        else { return }
        started.withLock { $0.append(identifier) }
        #endif
    }

    /// Gives the calling thread utility priority (`utility`) or the process's, as dispatch queues
    /// at those QoS had: on Linux the nice value libdispatch gives its workers, the main
    /// thread's plus 2 for utility, so that a woken worker does not take the CPU at once from a
    /// thread calling `manage` (with the workers at the main thread's, the `manage-latency`
    /// benchmark's load starts under load had a p99 about twice the dispatch queues'). A new
    /// thread would otherwise keep the nice value of the thread that started it. Apple platforms
    /// take the thread's `qualityOfService` instead.
    static func setCurrentThreadPriority(utility: Bool) {
        #if canImport(Glibc)
        // On Linux the nice value is each thread's own: `who` 0 is the calling thread, the
        // process's identifier its main thread.
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let base = getpriority(which, id_t(getpid()))
        _ = setpriority(which, 0, base + (utility ? 2 : 0))
        #endif
    }

    /// Names the calling thread `name` (15 bytes at most), for the system's thread list too.
    ///
    /// Why not `Thread.name` alone: corelibs Foundation passes it to the system only when the
    /// `Thread` already knows its pthread, which a thread that just started may not yet (it kept
    /// the name of the thread that started it, as Linux gives a new thread).
    package static func nameCurrentThread(_ name: String) {
        Thread.current.name = name
        #if canImport(Glibc)
        // Swift's Glibc module leaves out `pthread_setname_np`; the kernel takes the name here too.
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var bytes = Array(name.utf8.prefix(15))
        _ = write(descriptor, &bytes, bytes.count)
        #elseif canImport(Darwin)
        _ = pthread_setname_np(name)
        #endif
    }
}

/// A fixed number of named threads that run jobs in the order they were queued.
///
/// A thread starts when a job is queued and none is idle, until `threadCount` run; they are never
/// stopped (the pools are the process's). An idle thread waits on a semaphore of its own; a
/// queued job wakes the one that went idle last, so the work stays on the fewest threads.
///
/// One thread is woken at a time: a job queued while a woken thread has not yet taken its first
/// job wakes nobody, and that thread, once it takes a job and finds more queued, wakes the next
/// (or starts one). So a caller queuing a burst (a `manage` starting a load queues its hand-off,
/// then the load's task) makes at most one wake-up, where each job woke a thread before: on a
/// busy 2-core machine every woken thread is one more that can take the CPU from the caller.
final class ThreadPool: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        /// Jobs in order: `outgoing` reversed, then `incoming` (a queue in two stacks).
        var incoming: [Job] = []
        var outgoing: [Job] = []
        /// The semaphores of threads waiting for a job, the last to go idle last.
        var idle: [DispatchSemaphore] = []
        var started = 0
        /// Threads woken or started that have not yet looked for a job.
        var waking = 0

        var isEmpty: Bool { incoming.isEmpty && outgoing.isEmpty }

        /// Wakes (or starts) one more thread, unless one is waking already or none is left.
        mutating func wakeOne(threadCount: Int) -> Wake {
            guard waking == 0 else { return .none }
            if let idle = idle.popLast() {
                waking += 1
                return .signal(idle)
            }
            guard started < threadCount else { return .none }
            started += 1
            waking += 1
            return .start(started)
        }

        mutating func popFirst() -> Job? {
            if outgoing.isEmpty {
                guard !incoming.isEmpty else { return nil }
                outgoing = incoming.reversed()
                incoming.removeAll(keepingCapacity: true)
            }
            return outgoing.popLast()
        }
    }

    /// What queuing a job asks of its caller, once the lock is released.
    private enum Wake {
        case none
        case signal(DispatchSemaphore)
        case start(Int)
    }

    private func perform(_ wake: Wake) {
        switch wake {
        case .none: break
        case .signal(let semaphore): semaphore.signal()
        case .start(let number): startThread(number: number)
        }
    }

    let name: String
    let threadCount: Int
    /// Whether the threads run at utility priority (`EngineThreads.setCurrentThreadPriority`).
    let isUtility: Bool
    private let state = Lock(State())

    /// A pool of `threadCount` threads named `name-1`, `name-2`… (`name` alone for one thread),
    /// at utility priority unless `isUtility` is `false`.
    init(name: String, threadCount: Int, isUtility: Bool = true) {
        precondition(threadCount > 0)
        self.name = name
        self.threadCount = threadCount
        self.isUtility = isUtility
    }

    /// Threads started so far.
    var startedCount: Int { state.withLock { $0.started } }

    /// Queues `job`, to run on one of the pool's threads after the jobs queued before it.
    func async(_ job: @escaping Job) {
        let threadCount = threadCount
        let wake = state.withLock { state -> Wake in
            state.incoming.append(job)
            return state.wakeOne(threadCount: threadCount)
        }
        perform(wake)
    }

    private func startThread(number: Int) {
        EngineThreads.startThread(named: threadCount == 1 ? name : "\(name)-\(number)", utility: isUtility) { [self] in
            work()
        }
    }

    /// A thread's life: the next job, or a wait for one.
    private func work() -> Never {
        let wakeUp = DispatchSemaphore(value: 0)
        let threadCount = threadCount
        var woken = true  // a thread starts as woken
        while true {
            let wasWoken = woken
            let (job, wake) = state.withLock { state -> (Job?, Wake) in
                if wasWoken { state.waking -= 1 }
                guard let job = state.popFirst() else {
                    state.idle.append(wakeUp)
                    return (nil, .none)
                }
                return (job, state.isEmpty ? .none : state.wakeOne(threadCount: threadCount))
            }
            guard let job else {
                wakeUp.wait()
                woken = true
                continue
            }
            woken = false
            perform(wake)
            job()
        }
    }
}

/// Jobs that run one at a time, in order, on a pool's threads (a serial queue without a thread of
/// its own): a prefetch batch's callbacks.
final class SerialLane: Sendable {
    private struct State {
        /// Queued jobs from `next` on; each slot is emptied when its job is taken.
        var jobs: [ThreadPool.Job?] = []
        var next = 0
        /// Whether a drain is queued or running on the pool.
        var draining = false
    }

    private let pool: ThreadPool
    private let state = Lock(State())

    init(on pool: ThreadPool = EngineThreads.workers) {
        self.pool = pool
    }

    /// Queues `job`, to run after the lane's earlier jobs have.
    func async(_ job: @escaping ThreadPool.Job) {
        let startsDrain = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if startsDrain { pool.async { [self] in drain() } }
    }

    private func drain() {
        while let job = state.withLock({ state -> ThreadPool.Job? in
            guard state.next < state.jobs.count else {
                state.jobs.removeAll()
                state.next = 0
                state.draining = false
                return nil
            }
            defer {
                state.jobs[state.next] = nil
                state.next += 1
            }
            return state.jobs[state.next]
        }) {
            job()
        }
    }
}

// MARK: - Tasks on the engine's workers

/// The executor the manager runs its loads, decodes and file-cache work on: the engine's worker
/// threads (`EngineThreads.workers`) rather than Swift's cooperative pool.
///
/// Why: decoding and file I/O block their thread for a while, and so does app code that waits
/// synchronously. The cooperative pool has one thread per core (two on a small device), so a
/// few blocked threads there would stall every image in the app, and the app's own tasks would
/// stall the loads. The workers are the engine's alone, a fixed number whatever the load (a
/// concurrent dispatch queue, used before, added a thread for every block that blocked).
///
/// Task executors arrived with iOS 18 / macOS 15: below them, `LoadingTask.start` runs the same
/// work as detached tasks on the cooperative pool (what most image pipelines do everywhere).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class LoadingExecutor: TaskExecutor {  // portability-lint: allow declared @available
    /// One executor per process, shared by every manager.
    static let shared = LoadingExecutor()

    private let workers = EngineThreads.workers

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        workers.async { job.runSynchronously(on: executor) }
    }
}

/// Starts the manager's loading work: on `LoadingExecutor` where task executors exist (Linux,
/// iOS 18, macOS 15 and later), else as a detached task.
enum LoadingTask {
    /// Starts `operation` with `priority` (default: none) and returns its task.
    @discardableResult
    static func start<Success: Sendable>(
        priority: TaskPriority? = nil, _ operation: sending @escaping () async -> Success
    ) -> Task<Success, Never> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // portability-lint: allow inside #available
            return Task(executorPreference: LoadingExecutor.shared, priority: priority, operation: operation)
        }
        return Task.detached(priority: priority, operation: operation)
    }

    /// Starts the throwing `operation` with `priority` (default: none) and returns its task.
    @discardableResult
    static func start<Success: Sendable>(
        priority: TaskPriority? = nil, _ operation: sending @escaping () async throws -> Success
    ) -> Task<Success, any Error> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // portability-lint: allow inside #available
            return Task(executorPreference: LoadingExecutor.shared, priority: priority, operation: operation)
        }
        return Task.detached(priority: priority, operation: operation)
    }
}
