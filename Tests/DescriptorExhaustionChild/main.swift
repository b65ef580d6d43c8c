// A child process for the descriptor-exhaustion test:
//
//     DescriptorExhaustionChild <cache directory> <single|big> [<trap report file>]
//
// It lowers its descriptor limit to 128, loads one key (leaving a keep-alive connection), then
// uses up every descriptor left and loads again: a key over the open connection (the file cache
// cannot open a file: the object must come from memory, uncached, with a `fileCacheFailure`
// event) and a key on a second server (no connection can be opened: the load must fail with a
// typed error). Then it frees the descriptors and checks that everything works and nothing is
// damaged. Each step prints one line, `<step> <ok|FAIL> <detail>`; it exits 0 when every step
// is ok, 1 otherwise. A crash shows as a signal in the parent; with a report file, a trap also
// says there whether it hit in libdispatch (see `TrapReport.swift`).

import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
/// `RLIMIT_NOFILE` as `setrlimit` takes it (an enum case in Glibc, an `Int32` in Darwin).
let descriptorResource = Int32(RLIMIT_NOFILE.rawValue)
#elseif canImport(Darwin)
import Darwin
let descriptorResource = RLIMIT_NOFILE
#endif

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

struct BytesDecoder: ObjectDecoding {
    var identifier: String { "bytes" }
    func decode(_ data: LoadedData) throws -> Data { try data.bytes() }
}

func body(_ path: String) -> Data { Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ path.utf8.count) }) }

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
    guard arguments.count == 3 || arguments.count == 4 else {
        say("usage: DescriptorExhaustionChild <directory> <single|big> [<trap report file>]")
        return false
    }
    var limit = rlimit(rlim_cur: 128, rlim_max: 128)
    guard setrlimit(descriptorResource, &limit) == 0 else {
        say("limit FAIL setrlimit errno \(errno)")
        return false
    }
    let directory = URL(fileURLWithPath: arguments[1])
    let servers: [LoopbackServer]
    let cache: any FileCaching
    do {
        servers = try [LoopbackServer(), LoopbackServer()]
        cache = arguments[2] == "big" ? try BigFileCache(directory: directory) : try FileCache(directory: directory)
    } catch {
        say("setup FAIL \(error)")
        return false
    }
    for server in servers {
        server.setFallback { request in .ok(body(request.path)) }
    }
    let events = Lock<[ManagerEvent]>([])
    var configuration = ObjectManager.Configuration()
    configuration.fileCache = cache
    configuration.policy.retry = .none
    configuration.eventHandler = { event in events.withLock { $0.append(event) } }
    let manager = ObjectManager(configuration: configuration)
    let decoder = BytesDecoder()
    var allOK = true
    func check(_ step: String, _ condition: Bool, _ detail: @autoclosure () -> String) {
        say("\(step) \(condition ? "ok" : "FAIL") \(detail())")
        if !condition { allOK = false }
    }
    func load(_ url: URL) -> Result<Data, ManagedCacheError> {
        blocking {
            do { return .success(try await manager.object(for: ObjectRequest(url: url), decoder: decoder)) } catch let error
                as ManagedCacheError
            {
                return .failure(error)
            } catch { return .failure(.transport(code: -1, description: "\(error)")) }
        }
    }

    // 1. A normal load leaves a keep-alive connection to the first server.
    let first = servers[0].url("/first")
    check("warm", (try? load(first).get()) == body("/first"), "loaded \(first.path)")

    // 2. Every descriptor left is taken (the trap report's file first).
    if arguments.count == 4 { installTrapReport(at: arguments[3]) }
    var taken: [Int32] = []
    while true {
        let descriptor = open("/dev/null", O_RDONLY)
        if descriptor < 0 { break }
        taken.append(descriptor)
    }
    check("exhaust", errno == EMFILE, "\(taken.count) descriptors taken, then errno \(errno)")

    // 3. The file cache cannot open a file: served from memory over the open connection, not
    //    cached, a file-cache failure reported with its key.
    let second = servers[0].url("/second")
    let served = load(second)
    check("memory", (try? served.get()) == body("/second"), "\(served.map(\.count))")
    check("uncached", cache.entry(forKey: second.absoluteString) == nil, "no entry for \(second.path)")
    let reported = events.withLock { $0 }.contains { event in
        if case .fileCacheFailure(let key, let operation, let error) = event {
            return key == second.absoluteString && operation == .create && error.errno == EMFILE && error.isOutOfDescriptors
        }
        return false
    }
    check("event", reported, "\(events.withLock { $0 })")

    // 4. No connection can be opened to the second server: a typed failure.
    let third = servers[1].url("/third")
    let refused = load(third)
    var typed = false
    if case .failure(.transport) = refused { typed = true }
    check("connection", typed, "\(refused.map(\.count))")

    // 5. Descriptors back: everything works, nothing was damaged.
    for descriptor in taken { close(descriptor) }
    check("recover-third", (try? load(servers[1].url("/fourth")).get()) == body("/fourth"), "a new connection")
    manager.removeAllObjects()
    check("recover-second", (try? load(second).get()) == body("/second"), "reloaded and cached")
    for url in [first, second] {
        let entry = cache.entry(forKey: url.absoluteString)
        let bytes = entry.flatMap { try? cache.readData(for: $0) }
        check("entry", bytes == body(url.path), "\(url.path): \(bytes?.count ?? -1) bytes")
    }
    let loading = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("loading").path)) ?? []
    check("loading", loading.isEmpty, "\(loading.count) files in loading/")
    return allOK
}

exit(run() ? 0 : 1)
