import Foundation
import ManagedCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The memory scenario's measuring half, run in a fresh child process (`--memory-child`) so its
/// resident-memory figures hold nothing but this workload. The loopback server runs in the parent
/// (its request records would otherwise count here). The child creates a manager whose memory
/// cache is limited by bytes, warms it up, records the idle resident memory, restarts the
/// high-water mark, downloads and decodes every object once (6 at a time), and prints one
/// `memory-result` line the parent parses.
///
/// With `client=session` it downloads the same objects with raw `URLSession` and keeps nothing:
/// what the platform's networking alone adds to resident memory over as many requests.
struct MemoryFootprintChild {
    /// The command-line flag that selects this mode.
    static let flag = "--memory-child"

    let server: URL
    let usesManager: Bool
    let objects: Int
    let objectSize: Int
    let costLimit: Int

    /// Reads `server=` (base URL), `client=` (`manager` or `session`), `objects=`, `size=` and
    /// `limit=` (bytes) from the child's arguments.
    init(arguments: [String: String]) {
        usesManager = arguments["client"] != "session"
        server = arguments["server"].flatMap { URL(string: $0) } ?? URL(string: "http://127.0.0.1:1")!
        objects = arguments["objects"].flatMap { Int($0) } ?? 10_000
        objectSize = arguments["size"].flatMap { Int($0) } ?? 100_000
        costLimit = arguments["limit"].flatMap { Int($0) } ?? 50 << 20
    }

    /// The arguments that make a child run this workload.
    static func arguments(server: URL, manager: Bool, objects: Int, objectSize: Int, costLimit: Int) -> [String] {
        [
            flag, "server=\(server.absoluteString)", "client=\(manager ? "manager" : "session")", "objects=\(objects)",
            "size=\(objectSize)", "limit=\(costLimit)",
        ]
    }

    /// Runs the workload; returns the exit status.
    func run() -> Int32 {
        do {
            let result = try measure()
            print(result.line)
            return 0
        } catch {
            print("memory-error \(error)")
            return 1
        }
    }

    private func measure() throws -> MemoryFootprintResult {
        var configuration = ObjectManager.Configuration()
        configuration.memoryCacheCountLimit = 1 << 20  // bounded by bytes only
        configuration.memoryCacheCostLimit = costLimit
        let manager = ObjectManager(configuration: configuration)
        let decoder = PayloadDecoder()
        let fetcher = ConcurrentFetcher(concurrency: 6)
        let session = BaselineSession.make()
        defer { session.finishTasksAndInvalidate() }
        let usesManager = self.usesManager
        let load: @Sendable (URL) async throws -> Int = { url in
            if usesManager {
                return try await manager.object(for: ObjectRequest(url: url), decoder: decoder).bytes.count
            }
            return try await session.data(from: url).0.count
        }

        // Warm up the server, URLSession and the thread pools, then empty the cache: that is idle.
        let warmUp = (0..<60).map { server.appendingPathComponent("memory/warm-up/\($0)") }
        _ = try fetcher.objectsPerSecond(warmUp, expectedSize: objectSize, fetch: load)
        manager.removeAllObjects()
        Thread.sleep(forTimeInterval: 0.2)
        let idle = ProcessMemory.residentBytes ?? 0
        let peakWasReset = ProcessMemory.resetPeak()

        let urls = (0..<objects).map { server.appendingPathComponent("memory/objects/\($0)") }
        let start = Stopwatch.now()
        _ = try fetcher.objectsPerSecond(urls, expectedSize: objectSize, fetch: load)
        let seconds = Stopwatch.seconds(since: start)
        return MemoryFootprintResult(
            idleBytes: idle, peakBytes: ProcessMemory.peakResidentBytes ?? 0,
            finalBytes: ProcessMemory.residentBytes ?? 0, cachedCost: manager.memoryCache.totalCost,
            cachedCount: manager.memoryCache.count, decodes: usesManager ? decoder.counter.count - warmUp.count : objects,
            seconds: seconds, peakWasReset: peakWasReset)
    }
}
