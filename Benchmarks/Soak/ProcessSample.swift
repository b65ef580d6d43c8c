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
    /// Of `threads`, the engine's own: those alive that the engine started (see `engineThreadCount`).
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
        // One listing for both counts, so that the engine's share is of one moment.
        let descriptorNames = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return ProcessSample(
            seconds: seconds, residentBytes: statusField("VmRSS"),
            descriptors: descriptorNames?.count, runtimeEventDescriptors: descriptorNames.map(runtimeEventDescriptorCount),
            threads: entries("/proc/self/task"), threadNames: currentThreadNames(), engineThreads: engineThreadCount(),
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

    /// How many of the process's threads alive now are the engine's own: by the kernel's
    /// identifiers of the threads the engine started (`EngineThreads.threadIdentifiers`), not by
    /// name. On Linux a new thread has the name of the thread that started it until it names
    /// itself, so a libdispatch worker that FoundationNetworking starts from the engine's starter
    /// thread shows as `MCache.starter` for a moment (Linux; `nil` elsewhere).
    static func engineThreadCount() -> Int? {
        #if os(Linux)
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        let engine = Set(EngineThreads.threadIdentifiers)
        return tasks.reduce(0) { count, task in Int(task).map { engine.contains($0) } == true ? count + 1 : count }
        #else
        return nil
        #endif
    }

    /// The process's threads by name now (Linux; `nil` elsewhere).
    static func currentThreadNames() -> [String: Int]? {
        #if os(Linux)
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        var names: [String: Int] = [:]
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8) else { continue }
            names[comm.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
        }
        return names
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

    private static func entries(_ path: String) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: path)).map(\.count)
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
