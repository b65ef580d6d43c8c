// A child process for the streaming-memory test:
//
//     StreamingMemoryChild <url of the body> <blocks> <cache|nocache> <directory>
//
// It downloads `<blocks>` MiB (`StreamingPayload`) from the parent's loopback server at full
// speed with an `ObjectManager` and a `FileURLDecoder`, into a `FileCache` in `<directory>`
// (`cache`) or without a file cache (`nocache`: the body goes to a temporary file, and this
// process's temporary directory is `<directory>`), and measures its own resident memory: the
// resident size after a warm-up download, then the high-water mark (`VmHWM`, restarted at that
// point through `/proc/self/clear_refs`) over the download. It prints one line per figure,
// `<name> <value>`, and checks the file it got. Linux only (it reads /proc).

import Foundation
import ManagedCache
@_spi(Diagnostics) import ManagedCache
import ManagedCacheLocking
import StreamingPayload

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// A `kB` field of `/proc/self/status`, in bytes (nil without /proc).
func statusField(_ name: String) -> Int? {
    #if !os(Linux)
    return nil
    #else
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
        let number = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
        return number.flatMap { Int($0) }.map { $0 * 1_024 }
    }
    return nil
    #endif
}

/// Restarts the high-water mark from the current resident size.
func resetPeak() -> Bool {
    #if !os(Linux)
    return false
    #else
    guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
    defer { try? handle.close() }
    return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    #endif
}

/// Runs `operation` on a task and waits for it on this thread.
func blocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let result = Lock<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await operation()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

func run() -> Bool {
    let arguments = CommandLine.arguments
    guard arguments.count == 5, let url = URL(string: arguments[1]), let blocks = Int(arguments[2]) else {
        say("usage: StreamingMemoryChild <url> <blocks> <cache|nocache> <directory>")
        return false
    }
    let directory = URL(fileURLWithPath: arguments[4])
    var configuration = ObjectManager.Configuration()
    if arguments[3] == "cache" {
        do {
            configuration.fileCache = try FileCache(directory: directory.appendingPathComponent("cache"))
        } catch {
            say("setup FAIL \(error)")
            return false
        }
    }
    configuration.policy.retry = .none
    configuration.policy.timeout = 120
    let manager = ObjectManager(configuration: configuration)
    func load(_ url: URL) -> Result<DecodedFile, ManagedCacheError> {
        blocking {
            do {
                return .success(try await manager.object(for: ObjectRequest(url: url), decoder: FileURLDecoder()))
            } catch let error as ManagedCacheError {
                return .failure(error)
            } catch {
                return .failure(.transport(code: -1, description: "\(error)"))
            }
        }
    }
    // Warm-up: the session, libcurl, the manager's executors and the file cache exist before the
    // baseline is taken.
    let warmUp = url.appendingPathComponent("warm-up")
    guard case .success = load(warmUp) else {
        say("warm-up FAIL")
        return false
    }
    guard let baseline = statusField("VmRSS"), resetPeak() else {
        say("baseline FAIL cannot read or reset resident memory")
        return false
    }
    let waitsBefore = LoadAccounting.backPressureWaits
    let start = DispatchTime.now().uptimeNanoseconds
    let loaded = load(url)
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    guard let peak = statusField("VmHWM") else {
        say("peak FAIL cannot read resident memory")
        return false
    }
    say("baseline \(baseline)")
    say("peak-growth \(peak - baseline)")
    say("seconds \(seconds)")
    say("waits \(LoadAccounting.backPressureWaits - waitsBefore)")
    switch loaded {
    case .success(let file):
        let matches = StreamingPayload.fileMatches(file.url, blockCount: blocks)
        say("content \(matches ? "ok" : "FAIL") \(file.url.path) temporary \(file.isTemporary)")
        return matches
    case .failure(let error):
        say("content FAIL \(error)")
        return false
    }
}

exit(run() ? 0 : 1)
