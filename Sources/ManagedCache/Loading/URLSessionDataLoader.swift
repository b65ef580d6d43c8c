import Foundation
import ManagedCacheLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `http` and `https` URLs with `URLSession` (FoundationNetworking on Linux), streaming each
/// body to its receiver as it arrives.
///
/// It uses an ephemeral session: `URLCache` stores nothing on Linux anyway, and the manager does
/// its own caching. Redirects are followed (at most 20, then the load fails). Cancelling the Swift
/// task running `load` cancels the `URLSessionTask` at once.
///
/// The loader runs at most the session's `httpMaximumConnectionsPerHost` loads of one host (host
/// name and port) at once and holds the others back until one ends, highest ``LoadPriority``
/// first (first come first served among equals; a load raised while it waits goes ahead).
/// `URLSession` would queue them itself, out of sight, and the manager's idle timeout would count
/// that wait; held back here, they tell their receiver they are waiting, so the idle timeout
/// counts only from when the request is handed to the session. (Linux's `URLSession` has no
/// callback for "request sent": `didSendBodyData` is not called for a GET, task metrics are
/// not delivered, `countOfBytesSent` stays 0; so the limit is the way to know a load is on the
/// wire.) Loads a redirect takes to another host count against the first host only. Over HTTP/2,
/// where one connection could carry more requests, the limit still applies.
public final class URLSessionDataLoader: DataLoading {
    private let session: URLSession
    private let delegate: SessionDelegate
    private let hostLimit: HostConnectionLimit
    #if !canImport(Darwin)
    /// Where tasks are created and resumed on Linux (see `transfer`): one thread for every loader
    /// of the process, as FoundationNetworking has one work queue for every session.
    private let starter = EngineThreads.starter
    #endif

    /// The networks this loader's loads may use.
    public let networkAccess: NetworkAccess

    /// Creates a loader with its own ephemeral session.
    ///
    /// - Parameters:
    ///   - maximumConnectionsPerHost: How many loads of one host run at once; the others wait,
    ///     untimed, for one to end. Default 6, as `URLSession` does on Linux and macOS.
    ///   - networkAccess: Whether loads may use a network in Low Data Mode and an expensive one
    ///     (cellular, a personal hotspot). Default ``NetworkAccess/unrestricted``.
    ///   - configure: Changes the session configuration further (proxies, TLS, extra headers).
    ///     The loader then runs as many loads per host at once as the configuration's
    ///     `httpMaximumConnectionsPerHost` says. Default `nil`.
    public init(
        maximumConnectionsPerHost: Int = 6, networkAccess: NetworkAccess = .unrestricted,
        configure: ((URLSessionConfiguration) -> Void)? = nil
    ) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        #if canImport(Darwin)
        // iOS 13, macOS 10.15, tvOS 13, watchOS 6: below every deployment target. Neither
        // property exists in swift-corelibs-foundation (Linux has no such network states).
        configuration.allowsConstrainedNetworkAccess = networkAccess.allowsConstrainedNetwork
        configuration.allowsExpensiveNetworkAccess = networkAccess.allowsExpensiveNetwork
        #endif
        self.networkAccess = networkAccess
        configure?(configuration)
        let perHost = configuration.httpMaximumConnectionsPerHost
        #if canImport(Darwin)
        let delegate = SessionDelegate()
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        #else
        // libcurl's own per-host limit is set above the loader's. A cancelled transfer can end
        // for the loader, and hand its place to the next load, before libcurl has closed its
        // connection (after a grace period when the session's report of the end is late: see
        // `SessionTransfer`). At the same limit libcurl would then hold the next load back, out
        // of sight, while the load's idle timeout runs: the likely cause of a load its server
        // answered at once timing out after 10 s, in the contended test runs, behind six
        // cancelled ones.
        configuration.httpMaximumConnectionsPerHost = perHost * 2
        // Back-pressure: FoundationNetworking queues every received chunk for the delegate
        // without limit; this queue holds libcurl back instead (see `BoundedDelegateQueue`).
        let queue = BoundedDelegateQueue()
        let delegate = SessionDelegate(queue: queue)
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        #endif
        self.delegate = delegate
        self.hostLimit = HostConnectionLimit(limit: perHost)
    }

    deinit {
        #if canImport(Darwin)
        session.invalidateAndCancel()
        #else
        // From the delegate queue, as every cancellation of this session is sent on Linux (see
        // `SessionDelegate.cancel(_:)`): `invalidateAndCancel()` cancels the tasks still running,
        // and a `cancel()` sent from another thread could reach a task while the delegate queue
        // delivers its end or answers its redirect. Not held back by the queue's back-pressure;
        // `cancel()` waits for the work queue, which the queue may be holding.
        let session = self.session
        if let queue = session.delegateQueue as? BoundedDelegateQueue {
            queue.addOperationWithoutWaiting { queue.withoutHoldingProducers { session.invalidateAndCancel() } }
        } else {
            session.invalidateAndCancel()
        }
        #endif
    }

    /// Transfers registered and not yet over (for the reliability tests).
    var transfersInFlight: Int { delegate.transferCount }

    /// What each transfer not yet over is doing (for the reliability tests' failure messages).
    var transferDiagnoses: [String] { delegate.diagnoses }

    /// For the tests: runs first in each delivery of a task's end (on the session's delegate queue).
    func whenDeliveringATasksEnd(_ hook: (@Sendable () -> Void)?) {
        delegate.willDeliverCompletion.withLock { $0 = hook }
    }

    /// For the tests: how the cancellations sent from the session's delegate queue ended (Linux).
    var cancellationCounts: TaskCancellationCounts { delegate.cancellationCounts.withLock { $0 } }

    #if !canImport(Darwin)
    /// How many times FoundationNetworking had to wait for the delegate to catch up (for the tests).
    var backPressureWaits: Int { (session.delegateQueue as? BoundedDelegateQueue)?.waitCount ?? 0 }

    /// Operations on the session's delegate queue, queued or running (for the tests).
    var delegateOperationsQueued: Int { (session.delegateQueue as? BoundedDelegateQueue)?.queuedCount ?? 0 }
    #endif

    /// Loads of `url`'s host running and held back for a connection (for the tests).
    func connectionCounts(forHostOf url: URL) -> (running: Int, waiting: Int) {
        hostLimit.counts(for: HostConnectionLimit.hostKey(for: url))
    }

    /// Whether the URL is `http` or `https` with a host.
    ///
    /// - Parameter url: The URL of a request about to load.
    /// - Returns: `true` for an `http` or `https` URL with a non-empty host.
    public func canLoad(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return (scheme == "http" || scheme == "https") && url.host?.isEmpty == false
    }

    /// Loads the request once one of its host's connections is free, streaming the body to the
    /// receiver as it arrives.
    ///
    /// - Parameters:
    ///   - request: What to fetch; its priority orders the wait for a connection and sets the
    ///     task's priority, following the manager's changes while the load runs.
    ///   - receiver: Told ``DataLoadReceiver/requestIsWaitingForConnection()`` when the load has
    ///     to wait (on Linux also while the task is being handed to the session),
    ///     ``DataLoadReceiver/requestDidStart()`` when it goes on the wire, then the response and
    ///     the body.
    /// - Returns: The response, once the body is complete.
    /// - Throws: ``ManagedCacheError/cancelled(_:)`` when the task is cancelled while the load
    ///   waits for a connection, `URLError` when the transfer fails or is cancelled, or the
    ///   receiver's error.
    public func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        // A load cancelled before it started (its fetch was cancelled while this task waited to
        // be scheduled) opens no connection.
        if Task.isCancelled { throw ManagedCacheError.cancelled(.caller) }
        let host = HostConnectionLimit.hostKey(for: request.url)
        do {
            try await hostLimit.acquire(
                host, priority: { request.currentPriority }, willWait: { receiver.requestIsWaitingForConnection() })
        } catch {
            throw ManagedCacheError.cancelled(.caller)
        }
        defer { hostLimit.release(host) }
        if Task.isCancelled { throw ManagedCacheError.cancelled(.caller) }  // cancelled while admitted
        #if canImport(Darwin)
        receiver.requestDidStart()
        #else
        // Not on the wire yet: the starter thread hands it to the session (see `transfer`), and
        // says so then. Its queue is the engine's, shared by every loader, so a wait there is not
        // the server's silence.
        receiver.requestIsWaitingForConnection()
        #endif
        return try await transfer(request, receiver: receiver)
    }

    /// Runs one `URLSessionDataTask` (the host's limit admitted it).
    private func transfer(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // The manager runs its own idle-timeout watchdog (Linux rounds URLSession timeouts down to
        // whole seconds); this is only a backstop a little beyond it.
        urlRequest.timeoutInterval = max(1, request.timeout.rounded(.up) + 1)
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        #if canImport(Darwin)
        let task = session.dataTask(with: urlRequest)
        // URLSession orders a host's waiting tasks by it; the manager may change it while the load
        // runs (a user with a higher priority joins).
        task.priority = request.currentPriority.taskPriority
        request.priorityCell?.observe { [weak task] priority in task?.priority = priority.taskPriority }
        // Registered before anything can cancel the task: its end may be reported before this
        // task starts waiting (see `SessionTransfer`).
        let transfer = delegate.register(task: task, receiver: receiver)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.wait(continuation)
                task.resume()  // does nothing once the task is cancelling
            }
        } onCancel: { [delegate = self.delegate] in
            Self.cancel(task, transfer, delegate: delegate)
        }
        #else
        // Created, registered and resumed in one job on the engine's starter thread, the load's
        // task suspended meanwhile: FoundationNetworking's `dataTask(with:)` and `resume()` wait
        // for its one work queue, which every session of the process shares and which other
        // transfers (and this session's back-pressure) can hold for seconds on a loaded machine.
        // Called here, they held the engine's workers, which every manager's loads, decodes and
        // file work share, and could hold all of them (see `EngineThreads`). One thread for every
        // loader loses nothing: the waits are all for the same work queue.
        //
        // One job, not one to create the task and one to resume it: each job wakes a thread,
        // and between the two the load's task was resumed on `LoadingExecutor` only to register
        // the transfer (two thread wake-ups per load that raw `URLSession` does not make).
        // Not set: the task's priority. FoundationNetworking stores it without using it, and reads
        // and writes it by waiting for the process-wide work queue, which back-pressure may be holding.
        let session = self.session
        let launch = TransferLaunch()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                starter.async { [delegate, urlRequest] in
                    // Cancelled before this block ran: no task is created at all.
                    guard !launch.isCancelled else {
                        continuation.resume(throwing: ManagedCacheError.cancelled(.caller))
                        return
                    }
                    let task = session.dataTask(with: urlRequest)
                    // Registered before the task can run or be cancelled: its end may be reported
                    // before the continuation is handed over otherwise (see `SessionTransfer`).
                    let transfer = delegate.register(task: task, receiver: receiver)
                    transfer.wait(continuation)
                    if launch.launched(task, transfer) {
                        // The idle timeout counts from here: the wait for this thread, and for
                        // FoundationNetworking's work queue in `dataTask(with:)`, was not silence
                        // on the wire (on a loaded machine it lasted seconds).
                        receiver.requestDidStart()
                        task.resume()
                    } else {
                        // Cancelled meanwhile: the cancellation handler found nothing to cancel.
                        Self.cancel(task, transfer, delegate: delegate)
                    }
                }
            }
        } onCancel: { [delegate = self.delegate] in
            if let (task, transfer) = launch.cancel() { Self.cancel(task, transfer, delegate: delegate) }
        }
        #endif
    }

    /// Cancels the task of a load whose Swift task was cancelled, and ends its transfer after a
    /// grace period if the session never reports the task's end (see `SessionTransfer`).
    private static func cancel(_ task: URLSessionTask, _ transfer: SessionTransfer, delegate: SessionDelegate) {
        delegate.cancel(task)
        let identifier = task.taskIdentifier
        transfer.cancelled { endedByGrace in if endedByGrace { delegate.forget(taskIdentifier: identifier) } }
    }
}

/// The session's delegate: routes callbacks to the transfer of each task.
///
/// `URLSessionDelegate` must be `Sendable`; the table sits in one lock, and each transfer guards
/// its own state.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Lock<[Int: SessionTransfer]>([:])
    #if !canImport(Darwin)
    /// The session's delegate queue, told each chunk's size.
    private let queue: BoundedDelegateQueue

    init(queue: BoundedDelegateQueue) {
        self.queue = queue
    }
    #endif

    /// Registers the transfer of `task`, which ends (and leaves the table) in `didCompleteWithError`.
    func register(task: URLSessionTask, receiver: any DataLoadReceiver) -> SessionTransfer {
        let transfer = SessionTransfer(receiver: receiver)
        transfers.withLock { $0[task.taskIdentifier] = transfer }
        return transfer
    }

    /// Transfers registered and not yet over.
    var transferCount: Int { transfers.withLock { $0.count } }

    /// Each registered transfer's task and state.
    var diagnoses: [String] {
        let entries = transfers.withLock { $0 }
        return entries.map { identifier, transfer in "task \(identifier): \(transfer.diagnosis)" }
    }

    /// Removes the transfer of a task whose end the session never reported (see
    /// `SessionTransfer.cancelled(grace:graceEnded:)`).
    func forget(taskIdentifier: Int) {
        _ = transfers.withLock { $0.removeValue(forKey: taskIdentifier) }
    }

    /// For the tests: runs first in each delivery of a task's end, on the delegate queue.
    let willDeliverCompletion = Lock<(@Sendable () -> Void)?>(nil)

    /// For the tests: how the cancellations sent from the delegate queue ended.
    let cancellationCounts = Lock(TaskCancellationCounts())

    /// Cancels `task` without waiting for anything (the caller is often a thread inside
    /// `ObjectManager.manage`: a reused cell's previous load, a load pushed out of the loading
    /// buffer).
    ///
    /// On Apple platforms `URLSessionTask.cancel()` only marks the task and returns. On Linux the
    /// cancellation is sent from the session's delegate queue (`cancelOnDelegateQueue(_:)`), for
    /// two reasons: FoundationNetworking's `cancel()` waits for the process-wide work queue, which
    /// another transfer may be holding; and a `cancel()` that races the delivery of the task's end
    /// crashes the process (see there).
    func cancel(_ task: URLSessionTask) {
        #if canImport(Darwin)
        task.cancel()
        #else
        // Batched: the cancellation that finds the list empty queues one drain on the delegate
        // queue, and those that come before the drain runs only join the list. A fast scroll
        // cancels a load per cell; one operation each would take `OperationQueue`'s lock and wake
        // its thread from inside `manage` every time (the lock's holders are the queue's
        // busy delivering threads). The drain takes the list whole, so a task added after that
        // finds the list empty and queues the next drain: none is left behind.
        let queuesDrain = cancellationsToSend.withLock { waiting in
            waiting.append(task)
            return waiting.count == 1
        }
        guard queuesDrain else { return }
        // Not held back by the queue's back-pressure: a cancellation only ever shortens the work.
        queue.addOperationWithoutWaiting { [self] in
            let tasks = cancellationsToSend.withLock { waiting in
                defer { waiting.removeAll() }
                return waiting
            }
            for task in tasks { cancelOnDelegateQueue(task) }
        }
        #endif
    }

    #if !canImport(Darwin)
    /// Tasks `cancel(_:)` was asked to cancel, waiting for the drain it queued on the delegate queue.
    private let cancellationsToSend = Lock<[URLSessionTask]>([])

    /// Cancels `task` unless the session has delivered its end already. Runs on the delegate
    /// queue only, never while the session delivers the task's end.
    ///
    /// Why: FoundationNetworking (6.3) checks in `cancel()` that the task is still running, then
    /// queues the task's failure on its work queue. The session delivers a task's end on the
    /// delegate queue and then queues the task's removal from its registry on the work queue. When
    /// the two interleave (the removal queued between `cancel()`'s check and its failure), the
    /// failure finds no task in the registry and FoundationNetworking stops the process ("Trying
    /// to access a behaviour for a task that in not in the registry"); the soak hit it twice in 15
    /// runs of a minute. The delegate queue is serial, so here either the end has been delivered (the
    /// state is `.completed`, nothing to cancel) or its delivery has not begun and cannot begin
    /// before `cancel()` has queued the failure, which the work queue then runs before the removal.
    private func cancelOnDelegateQueue(_ task: URLSessionTask) {
        guard task.state != .completed else {
            cancellationCounts.withLock { $0.taskHadEnded += 1 }
            return
        }
        queue.withoutHoldingProducers {
            task.cancel()
            // Newer FoundationNetworking (after 6.3) runs `cancel()`'s check itself later, on the
            // work queue. Reading `priority` waits for that queue, so the check and the failure's
            // queueing are done before this queue goes on to deliver the task's end.
            _ = task.priority
        }
        cancellationCounts.withLock { $0.sentToTask += 1 }
    }
    #endif

    private func transfer(of task: URLSessionTask) -> SessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        let expected = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
        let loadResponse = DataLoadResponse(
            statusCode: http?.statusCode, headers: headers, expectedContentLength: expected, url: response.url)
        guard let transfer = transfer(of: dataTask) else {
            completionHandler(.cancel)
            return
        }
        transfer.noteResponse(loadResponse)
        do {
            try transfer.receiver.didReceive(response: loadResponse)
            completionHandler(.allow)
        } catch {
            transfer.noteReceiverError(error)
            completionHandler(.cancel)
            // FoundationNetworking ignores the disposition: the body still arrives, and is dropped
            // chunk by chunk. (Cancelling the task here instead made other transfers of the process
            // go silent for seconds under AddressSanitizer in 2 of 4 CI runs; not understood, so
            // not done.)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        #if !canImport(Darwin)
        queue.noteChunk(data.count)
        #endif
        guard let transfer = transfer(of: dataTask), !transfer.receiverFailed else { return }
        do {
            try transfer.receiver.didReceive(data)
        } catch {
            transfer.noteReceiverError(error)
            #if canImport(Darwin)
            dataTask.cancel()
            #else
            cancelOnDelegateQueue(dataTask)  // this is the delegate queue
            #endif
        }
    }

    /// Follows the redirect, unless (on Linux) the task is ending: then the question is left
    /// unanswered.
    ///
    /// Why: FoundationNetworking (6.3) asks this question from the delegate queue, and waits for
    /// the answer in a state of its own. An answer that reaches its work queue after the task left
    /// that state stops the process ("Received callback for HTTP redirection, but we're not
    /// waiting for it"); the contended test runs hit it. The task leaves it when it is cancelled
    /// (the failure `cancel()` queues ends the transfer), and when FoundationNetworking's own
    /// request timeout fires during the wait (it then sets the task's `response` to the redirect
    /// and leaves the task running, its end never reported). A task that left it needs no answer:
    /// a cancelled one ends with its cancellation, a timed-out one by the manager's idle timeout,
    /// which comes first (the request timeout is a backstop beyond it).
    ///
    /// Race-free because every cancellation of this session is sent from this serial queue
    /// (`cancelOnDelegateQueue(_:)`, the loader's `deinit`): either a cancellation ran before this
    /// question, and the task is `.canceling` or `.completed` here; or this question runs first,
    /// and its answer is on the work queue before `cancel()` queues the failure there, which the
    /// work queue then runs after the answer.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        #if !canImport(Darwin)
        guard task.state == .running, task.response == nil else {
            cancellationCounts.withLock { $0.redirectsLeftUnanswered += 1 }
            return
        }
        #endif
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        willDeliverCompletion.withLock { $0 }?()
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.complete(sessionError: error)
    }
}

/// How the cancellations sent from the session's delegate queue ended, and how many redirects of
/// ending tasks were not followed (for the tests).
struct TaskCancellationCounts: Equatable, Sendable {
    /// The task was still running: `URLSessionTask.cancel()` was called.
    var sentToTask = 0
    /// The session had delivered the task's end: there was nothing to cancel.
    var taskHadEnded = 0
    /// A redirect of a task that was ending was not followed (its question left unanswered).
    var redirectsLeftUnanswered = 0
}

/// Which networks a loader's loads may use: the system's Low Data Mode ("constrained" networks)
/// and expensive networks (cellular, a personal hotspot), as `URLSessionConfiguration`'s
/// `allowsConstrainedNetworkAccess` and `allowsExpensiveNetworkAccess` say on Apple platforms.
///
/// A load a network is not allowed for fails at once with the session's `URLError`
/// (`.notConnectedToInternet`, its `networkUnavailableReason` `.constrained` or `.expensive`),
/// which the manager reports as a network failure; what is in the caches is still served. On
/// Linux there are no such network states (and swift-corelibs-foundation has neither property):
/// every load may use every network, whatever this says.
public struct NetworkAccess: Sendable, Hashable {
    /// Whether loads may use a network while Low Data Mode is on.
    public var allowsConstrainedNetwork: Bool
    /// Whether loads may use an expensive network.
    public var allowsExpensiveNetwork: Bool

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - allowsConstrainedNetwork: Whether loads may use a network in Low Data Mode. Default `true`.
    ///   - allowsExpensiveNetwork: Whether loads may use an expensive network. Default `true`.
    public init(allowsConstrainedNetwork: Bool = true, allowsExpensiveNetwork: Bool = true) {
        self.allowsConstrainedNetwork = allowsConstrainedNetwork
        self.allowsExpensiveNetwork = allowsExpensiveNetwork
    }

    /// Every network, as `URLSession` allows by default.
    public static let unrestricted = NetworkAccess()
    /// Nothing while Low Data Mode is on: for prefetching and other loads the person did not ask
    /// for, as Apple asks apps to do in Low Data Mode.
    public static let respectsLowDataMode = NetworkAccess(allowsConstrainedNetwork: false)
    /// Neither in Low Data Mode nor on an expensive network: Wi-Fi and wired networks only.
    public static let inexpensiveOnly = NetworkAccess(allowsConstrainedNetwork: false, allowsExpensiveNetwork: false)
}
