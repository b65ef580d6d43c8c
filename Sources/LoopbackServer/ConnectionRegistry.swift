import Dispatch
import Foundation
import ManagedCacheLocking

/// The open connections and running threads of one server, so `stop()` can end them all.
///
/// Each connection thread owns its socket and is the only one to close it. `shutdownAll()`
/// only calls `shutdown` on registered sockets (under the lock), which wakes any blocked
/// `recv`/`send` without freeing the descriptor; a thread unregisters its socket (under the same
/// lock) before closing it. So `stop()` can never shut down a descriptor number that has
/// already been closed and handed to someone else.
final class ConnectionRegistry: Sendable {
    private struct State {
        var isStopped = false
        var sockets: Set<Int32> = []
        var peakCount = 0
        /// The threads started here that are still running.
        var threads: Set<ObjectIdentifier> = []
    }

    /// Stack size for server threads: they run short, shallow call chains.
    private static let threadStackSize = 1 << 20

    private let state = Lock(State())
    private let openSockets = Lock<Int>(0)
    private let runningThreads = Lock<Int>(0)
    private let threads = DispatchGroup()

    /// Connections currently open.
    var openCount: Int { openSockets.withLock { $0 } }

    /// Threads currently running (the accept thread and one per connection).
    var threadCount: Int { runningThreads.withLock { $0 } }

    /// Registers an accepted socket; false when the server is stopping (the caller closes it).
    func register(_ fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.isStopped else { return false }
            state.sockets.insert(fd)
            state.peakCount = max(state.peakCount, state.sockets.count)
            openSockets.withLock { $0 += 1 }
            return true
        }
    }

    /// The most connections open at once since start or `resetPeak()`.
    var peakOpenCount: Int { state.withLock { $0.peakCount } }

    /// Restarts the peak from the connections open now.
    func resetPeak() {
        state.withLock { $0.peakCount = $0.sockets.count }
    }

    /// Unregisters a socket its owner is about to close.
    func unregister(_ fd: Int32) {
        state.withLock { state in
            if state.sockets.remove(fd) != nil { openSockets.withLock { $0 -= 1 } }
        }
    }

    /// Runs `body` on a new thread, counted until it returns.
    func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        threads.enter()
        runningThreads.withLock { $0 += 1 }
        let thread = Thread { [self] in
            let current = ObjectIdentifier(Thread.current)
            state.withLock { _ = $0.threads.insert(current) }
            body()
            state.withLock { _ = $0.threads.remove(current) }
            runningThreads.withLock { $0 -= 1 }
            threads.leave()
        }
        thread.name = name
        thread.stackSize = Self.threadStackSize
        thread.start()
    }

    /// Whether the calling thread is one started here (a handler calling `stop()`, say).
    var isCallerAServerThread: Bool {
        let current = ObjectIdentifier(Thread.current)
        return state.withLock { $0.threads.contains(current) }
    }

    /// Refuses new sockets and shuts down every registered one, waking their threads.
    func shutdownAll() {
        state.withLock { state in
            state.isStopped = true
            for fd in state.sockets { Socket.shutdownBoth(fd) }
        }
    }

    /// Waits until every thread started here has returned, at most `timeout` seconds;
    /// returns whether they all did.
    func waitForThreads(timeout: Double) -> Bool {
        threads.wait(timeout: .now() + timeout) == .success
    }
}
