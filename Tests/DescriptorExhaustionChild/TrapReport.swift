// Where a trap (SIGILL, SIGTRAP) hit, written to a file opened before the descriptors are
// taken: a process out of descriptors cannot run Swift's backtracer, and the parent must tell a
// trap of libdispatch's from one of the engine's.
//
// Why libdispatch: on Linux its thread pool has a monitor that runs every second and, while a
// global queue has work waiting, opens `/proc/<tid>/stat` of every worker thread. When that
// `open` fails it assumes a worker died and traps (`_dispatch_workq_count_runnable_workers`:
// "workq: registered worker exited prematurely"), and with every descriptor taken it fails with
// `EMFILE`. A process that stays out of descriptors across one of those checks while its queues
// are busy dies of SIGILL, whatever it runs; on a loaded machine, about 1 run in 20 of this child.

#if os(Linux)
import Glibc

/// The report's descriptor and libdispatch's code range: globals, because a signal handler
/// captures nothing. Written once, before the handler is installed, then only read.
nonisolated(unsafe) private var reportDescriptor: Int32 = -1
nonisolated(unsafe) private var dispatchCode: (start: UInt, end: UInt) = (0, 0)

/// Opens `path` for the report and installs the handler. Call before the descriptors are taken.
func installTrapReport(at path: String) {
    reportDescriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    dispatchCode = executableRange(ofLibraryNamed: "libdispatch.so")
    var action = sigaction()
    action.sa_flags = SA_SIGINFO | Int32(bitPattern: UInt32(truncatingIfNeeded: SA_RESETHAND))
    action.__sigaction_handler.sa_sigaction = { signal, info, _ in
        // Async-signal-safe only: compare, write a constant, re-raise (the handler was reset).
        let address = UInt(bitPattern: info?.pointee._sifields._sigfault.si_addr)
        let inDispatch = address >= dispatchCode.start && address < dispatchCode.end
        let text: StaticString = inDispatch ? "trap in libdispatch\n" : "trap elsewhere\n"
        _ = write(reportDescriptor, text.utf8Start, text.utf8CodeUnitCount)
        raise(signal)
    }
    sigaction(SIGILL, &action, nil)
    sigaction(SIGTRAP, &action, nil)
}

/// The address range of the executable mapping of the library whose path contains `name`,
/// from `/proc/self/maps` (read line by line: its size reads as 0, so whole-file reads get nothing).
private func executableRange(ofLibraryNamed name: String) -> (start: UInt, end: UInt) {
    guard let maps = fopen("/proc/self/maps", "r") else { return (0, 0) }
    defer { fclose(maps) }
    var buffer = [CChar](repeating: 0, count: 4_096)
    while fgets(&buffer, Int32(buffer.count), maps) != nil {
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard line.contains(name) else { continue }
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, fields[1].hasPrefix("r-x") else { continue }
        let bounds = fields[0].split(separator: "-")
        guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16) else { continue }
        return (start, end)
    }
    return (0, 0)
}
#else
/// Elsewhere libdispatch has no such monitor (Apple platforms use the kernel's workqueues).
func installTrapReport(at path: String) {}
#endif
