import Foundation
import HeapProbe
@_spi(Diagnostics) import ManagedCache

/// One sample of the process's resources: resident memory, open descriptors, threads.
/// Read from `/proc/self` on Linux; elsewhere only what `getrusage`-free Foundation gives (nothing).
struct ProcessSample {
    var seconds: Double
    var residentBytes: Int?
    var descriptors: Int?
    /// Of `descriptors`, the runtime's event descriptors (`eventfd`, `timerfd`, `epoll`): libdispatch
    /// and CoreFoundation make them, never the engine (see `runSoak`'s verdict).
    var runtimeEventDescriptors: Int?
    var threads: Int?
    /// The threads by name (`/proc/self/task/*/comm`), so a thread list shows whose they are.
    var threadNames: [String: Int]?
    /// Of `threads`, the engine's own: those alive that the engine started (see `ThreadCensus`).
    var engineThreads: Int?
    /// Bytes the C heap has handed out and not had back (glibc's `mallinfo2`: small blocks in use
    /// plus mmapped blocks): the live heap, apart from what `malloc` keeps in free lists.
    var heapInUseBytes: Int?
    /// Bytes `malloc` holds from the system (its arenas plus mmapped blocks): in use or kept in
    /// its free lists. Resident memory well above it is not the C heap; it well above the bytes in
    /// use is memory freed but kept by the allocator.
    var heapFromSystemBytes: Int?
    /// Requests the soak's server had answered when the sample was taken (set by the soak).
    var requestsServed = 0
    /// URLSession tasks the engine's loaders made so far, and how many of them they cancelled.
    var tasksMade = 0
    var tasksCancelled = 0

    static func now(since start: Date) -> ProcessSample {
        let seconds = Date().timeIntervalSince(start)
        #if os(Linux)
        // One listing for both counts, so that the engine's share is of one moment (the threads'
        // census too).
        let descriptorNames = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        let threads = threadCensus()
        return ProcessSample(
            seconds: seconds, residentBytes: statusField("VmRSS"),
            descriptors: descriptorNames?.count, runtimeEventDescriptors: descriptorNames.map(runtimeEventDescriptorCount),
            threads: threads?.count, threadNames: threads?.names, engineThreads: threads?.engine,
            heapInUseBytes: heapInUse(), heapFromSystemBytes: heapFromSystem())
        #else
        return ProcessSample(
            seconds: seconds, residentBytes: nil, descriptors: nil, runtimeEventDescriptors: nil, threads: nil,
            threadNames: nil, engineThreads: nil, heapInUseBytes: nil, heapFromSystemBytes: nil)
        #endif
    }

    /// The descriptors the engine or the server could hold: all but the runtime's event descriptors.
    var engineDescriptors: Int? {
        guard let descriptors else { return nil }
        return descriptors - (runtimeEventDescriptors ?? 0)
    }

    /// Open descriptors naming a file under `directory` (Linux; `nil` elsewhere).
    static func descriptors(under directory: String) -> Int? {
        #if os(Linux)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return names.reduce(0) { count, name in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
            return target?.hasPrefix(directory) == true && target?.contains("/loading/") == true ? count + 1 : count
        }
        #else
        return nil
        #endif
    }

    /// The process's threads at one moment: how many, how many of each name
    /// (`/proc/self/task/*/comm`), and how many are the engine's own. The engine's are told by the
    /// kernel's identifiers of the threads it started (`EngineThreads.threadIdentifiers`), not by
    /// name: on Linux a new thread has the name of the thread that started it until it names
    /// itself, so a libdispatch worker that FoundationNetworking starts from the engine's starter
    /// thread shows as `MCache.starter` for a moment.
    struct ThreadCensus {
        var count = 0
        var names: [String: Int] = [:]
        var engine = 0
    }

    /// The threads now, from one listing of `/proc/self/task` (Linux; `nil` elsewhere).
    static func threadCensus() -> ThreadCensus? {
        #if os(Linux)
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        let engine = Set(EngineThreads.threadIdentifiers)
        var census = ThreadCensus(count: tasks.count)
        for task in tasks {
            if Int(task).map(engine.contains) == true { census.engine += 1 }
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8) else { continue }
            census.names[comm.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
        }
        return census
        #else
        return nil
        #endif
    }

    #if os(Linux)
    private static func heapInUse() -> Int? {
        let bytes = heap_probe_bytes_in_use()
        return bytes < 0 ? nil : Int(bytes)
    }

    private static func heapFromSystem() -> Int? {
        let bytes = heap_probe_bytes_from_system()
        return bytes < 0 ? nil : Int(bytes)
    }

    /// How many of the descriptors `names` (entries of `/proc/self/fd`) are event descriptors
    /// (`anon_inode:[eventfd]`, `[timerfd]`, `[eventpoll]`).
    private static func runtimeEventDescriptorCount(_ names: [String]) -> Int {
        names.reduce(0) { count, name in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? ""
            let isEvent = ["anon_inode:[eventfd]", "anon_inode:[timerfd]", "anon_inode:[eventpoll]"].contains(target)
            return isEvent ? count + 1 : count
        }
    }

    /// A `kB` field of `/proc/self/status`, in bytes.
    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let number = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
            return number.flatMap { Int($0) }.map { $0 * 1_024 }
        }
        return nil
    }
    #endif
}
