import Foundation
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, for the tests and the benchmarks that run one.
///
/// Not Foundation's `Process`: on Linux, `Process.run()` of Swift 6.3.1 (swift-corelibs-foundation
/// fixed it after that release) can read past the entries it lists in `/proc/self/fd` while it
/// looks for the descriptors to close in the child, and crash the test process: about one run
/// of the suite in twenty. This starts the child the same way (the
/// parent's descriptors past standard error closed in the child) without that listing:
/// `posix_spawn_file_actions_addclosefrom_np` on glibc 2.34 and later,
/// `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin.
public final class SpawnedProcess: Sendable {
    /// Where the child's standard output (or error) goes.
    public enum Output: Sendable {
        /// The parent's own.
        case inherit
        /// `/dev/null`.
        case discard
        /// A pipe the parent reads (`outputDescriptor`); standard output only.
        case pipe
    }

    /// The child's process identifier.
    public let processIdentifier: pid_t
    /// The reading end of the child's standard output, when it is `.pipe`; closed with this object.
    public let outputDescriptor: Int32?
    /// The child's wait status, once it has been reaped.
    private let status = Lock<Int32?>(nil)

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: The program's file.
    ///   - arguments: Its arguments (the program's path is passed as the first, as a shell does).
    ///   - environment: Its environment; default the test process's.
    ///   - standardOutput: Where its standard output goes. Default `.inherit`.
    ///   - standardError: Where its standard error goes (`.pipe` is not supported). Default `.inherit`.
    public init(
        executable: URL, arguments: [String], environment: [String: String]? = nil, standardOutput: Output = .inherit,
        standardError: Output = .inherit
    ) throws {
        #if !canImport(Darwin)
        guard let closeFrom = Self.addCloseFrom else {
            throw SpawnError(step: "posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)", code: ENOSYS)
        }
        #endif
        var pipeEnds: [Int32] = [-1, -1]
        if case .pipe = standardOutput {
            guard pipe(&pipeEnds) == 0 else { throw SpawnError(step: "pipe", code: errno) }
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        for (descriptor, output) in [(Int32(1), standardOutput), (Int32(2), standardError)] {
            switch output {
            case .inherit:
                #if canImport(Darwin)
                posix_spawn_file_actions_addinherit_np(&actions, descriptor)
                #endif
            case .discard:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            case .pipe:
                posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], descriptor)
            }
        }
        // The child starts with no signal blocked and every signal's default action: a test's
        // thread (a Dispatch worker) blocks most signals, and a child inheriting that mask would
        // ignore a SIGTERM.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))
        #if canImport(Darwin)
        posix_spawn_file_actions_addinherit_np(&actions, 0)
        #else
        // Last, after the dup2 above: closes the pipe's original ends in the child too.
        _ = closeFrom(&actions, 3)
        #endif
        let argv = ([executable.path] + arguments).map { strdup($0) }
        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") }
        defer {
            for pointer in argv + environmentStrings { free(pointer) }
        }
        var identifier: pid_t = 0
        let result = posix_spawn(&identifier, executable.path, &actions, &attributes, argv + [nil], environmentStrings + [nil])
        if pipeEnds[1] >= 0 { close(pipeEnds[1]) }
        guard result == 0 else {
            if pipeEnds[0] >= 0 { close(pipeEnds[0]) }
            throw SpawnError(step: "posix_spawn \(executable.path)", code: result)
        }
        processIdentifier = identifier
        outputDescriptor = pipeEnds[0] >= 0 ? pipeEnds[0] : nil
    }

    deinit {
        if let outputDescriptor { close(outputDescriptor) }
    }

    #if !canImport(Darwin)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np`, which the Glibc module does not
    /// export: looked up by name.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
    #endif

    /// Whether the child is still running (it is reaped once it has ended).
    public var isRunning: Bool {
        status.withLock { status in
            guard status == nil else { return false }
            var value: Int32 = 0
            if waitpid(processIdentifier, &value, WNOHANG) == processIdentifier { status = value }
            return status == nil
        }
    }

    /// Waits for the child to end.
    public func waitUntilExit() {
        status.withLock { status in
            guard status == nil else { return }
            var value: Int32 = 0
            while waitpid(processIdentifier, &value, 0) == -1 && errno == EINTR {}
            status = value
        }
    }

    /// Sends `signal` to the child, if it is still running.
    ///
    /// - Parameter signal: The signal (`SIGKILL`, `SIGTERM`…).
    public func send(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }

    /// How the child ended; `.exit` while it runs.
    public var terminationReason: Process.TerminationReason {
        guard let value = status.withLock({ $0 }) else { return .exit }
        return value & 0x7F == 0 ? .exit : .uncaughtSignal
    }

    /// Its exit status, or the signal that ended it; 0 while it runs.
    public var terminationStatus: Int32 {
        guard let value = status.withLock({ $0 }) else { return 0 }
        return value & 0x7F == 0 ? (value >> 8) & 0xFF : value & 0x7F
    }

    /// Reads the child's standard output (`.pipe`) until it closes.
    public func readOutputToEnd() -> Data {
        guard let outputDescriptor else { return Data() }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(outputDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: chunk[0..<count])
            } else if count == 0 || errno != EINTR {
                return data
            }
        }
    }
}

/// Starting a child failed.
public struct SpawnError: Error, CustomStringConvertible {
    /// The call that failed.
    public var step: String
    /// Its error number.
    public var code: Int32
    public var description: String { "\(step) failed: \(String(cString: strerror(code)))" }
}
