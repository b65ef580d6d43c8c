import Foundation
import ManagedCache

/// The million-entry scenario's memory half, run in a fresh child process (`--opening-child`):
/// opens the `BigFileCache` in `directory`, waits until its index is complete, and prints one
/// `opening-result` line with the process's resident memory then and the entries. The scenario
/// runs it on an empty directory and on the filled one: the difference, per entry, is what the
/// index costs a process that only opened the cache (in the scenario's own process, pages the
/// fill freed are reused and hide it).
struct BigFileCacheOpeningChild {
    /// The command-line flag that selects this mode.
    static let flag = "--opening-child"

    let directory: URL

    init(arguments: [String: String]) {
        directory = URL(fileURLWithPath: arguments["directory"] ?? NSTemporaryDirectory())
    }

    /// The arguments that make a child open the cache in `directory`.
    static func arguments(directory: URL) -> [String] {
        [flag, "directory=\(directory.path)"]
    }

    /// Opens, measures and prints; returns the exit status. Measured once the opening's thread
    /// has ended: until then it holds the journal's mapping, whose pages the replay read.
    func run() -> Int32 {
        do {
            let cache = try BigFileCache(directory: directory)
            let count = cache.statistics.count
            let start = Stopwatch.now()
            while Self.openingThreadRuns(), Stopwatch.seconds(since: start) < 10 { usleep(1_000) }
            print("opening-result resident=\(ProcessMemory.residentBytes ?? 0) count=\(count)")
            cache.close()
            return 0
        } catch {
            print("opening-failed \(error)")
            return 1
        }
    }

    /// Whether a thread of this process is named as a file cache's opening thread (Linux; false
    /// elsewhere).
    private static func openingThreadRuns() -> Bool {
        #if os(Linux)
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.contains { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("FileCache.open")
        }
        #else
        return false
        #endif
    }

    /// Runs a child on `directory`: its resident bytes once opened, and the entries it found.
    static func measure(_ directory: URL) throws -> (resident: Int, count: Int) {
        let run = try ChildRun.ofThisProgram(arguments: arguments(directory: directory))
        let fields = run.output.split(separator: " ").reduce(into: [String: Int]()) { fields, part in
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, let value = Int(pair[1].trimmingCharacters(in: .whitespacesAndNewlines)) {
                fields[String(pair[0])] = value
            }
        }
        guard run.status == 0, run.output.hasPrefix("opening-result"), let resident = fields["resident"], let count = fields["count"]
        else {
            throw BenchmarkFailure("opening child exited with \(run.status): \(run.output.suffix(300))")
        }
        return (resident, count)
    }
}
