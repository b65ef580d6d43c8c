import Dispatch
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-shot "the server is stopping" signal that interrupts every wait in the server.
///
/// It is a pipe: `raise()` writes one byte and nobody reads it, so the read end stays readable
/// and every `poll` on it, now or later, returns at once. Waits (latency, drip intervals,
/// bandwidth pacing, stalled connections, the accept loop) all poll this descriptor, so `stop()`
/// ends them without timers or condition variables. Each thread keeps the signal alive, and the
/// pipe is closed when the last one lets go, so no thread can ever poll a recycled descriptor.
final class WakeSignal: Sendable {
    /// What ended a wait.
    enum WaitOutcome: Equatable {
        /// The watched socket has data, an end of stream or an error to report.
        case readable
        /// The signal was raised: the server is stopping.
        case raised
        /// The timeout passed first.
        case timedOut
    }

    private let readFD: Int32
    private let writeFD: Int32
    private let raisedFlag = Lock<Bool>(false)

    /// Creates the pipe.
    init() throws(LoopbackServerError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .system(call: "pipe", errno: errno) }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        Socket.close(readFD)
        Socket.close(writeFD)
    }

    /// The pipe's two descriptors.
    var descriptors: [Int32] { [readFD, writeFD] }

    /// Whether `raise()` was called.
    var isRaised: Bool { raisedFlag.withLock { $0 } }

    /// Wakes every current and future wait. Idempotent.
    func raise() {
        let wasRaised = raisedFlag.withLock { raised in
            defer { raised = true }
            return raised
        }
        guard !wasRaised else { return }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Sleeps `seconds`; returns false if the signal was raised before (or while) sleeping.
    func sleep(seconds: Double) -> Bool {
        guard seconds > 0 else { return !isRaised }
        return wait(for: nil, timeout: seconds) != .raised
    }

    /// Waits until `fd` is readable, the signal is raised or `timeout` seconds pass
    /// (`nil`: no timeout).
    func wait(for fd: Int32?, timeout: Double?) -> WaitOutcome {
        let deadline = timeout.map { DispatchTime.now().uptimeNanoseconds + UInt64(max(0, $0) * 1e9) }
        var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)]
        if let fd { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                guard now < deadline else { return .timedOut }
                // Round up, so a wait never ends before its deadline.
                milliseconds = Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
            }
            let result = poll(&fds, nfds_t(fds.count), milliseconds)
            if result < 0 {
                if errno == EINTR { continue }
                return .raised
            }
            if fds[0].revents != 0 { return .raised }
            if fds.count > 1 && fds[1].revents != 0 { return .readable }
        }
    }
}
