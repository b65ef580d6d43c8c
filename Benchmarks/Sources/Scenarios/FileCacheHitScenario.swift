import Foundation
import ManagedCache

/// 5,000 file-cache hits with a cold memory cache: a new manager over a `FileCache` (and a
/// `BigFileCache`) already holding 5,000 objects of 16 KiB on the disk, loading all of them
/// (read, checksum verified, decoded, delivered), against `Data(contentsOf:)` on the same files.
/// Both sides run 6 workers reading one object at a time.
struct FileCacheHitScenario: BenchmarkScenario {
    let identifier = "file-cache-hits"
    let usesNetwork = false

    /// Objects in each cache.
    static let objectCount = 5_000
    /// Reads in flight on both sides.
    static let concurrency = 6

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let objectSize = NetworkThroughputScenario.objectSize
        let body = Data((0..<objectSize).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        // Keys of objects that are never downloaded: a miss would fail (nothing listens on port 9).
        let urls = (0..<Self.objectCount).map { URL(string: "http://127.0.0.1:9/objects/\($0).bin")! }
        let directory = try ScratchDirectory(prefix: "file-cache-hits")
        let fileCache = try FileCache(directory: directory.appending("file-cache"))
        let bigFileCache = try BigFileCache(directory: directory.appending("big-file-cache"))
        var files: [[URL]] = [[], []]
        for (index, cache) in [fileCache as any FileCaching, bigFileCache].enumerated() {
            for url in urls {
                files[index].append(try cache.store(body, forKey: url.absoluteString, metadata: FileCacheMetadata()).fileURL)
            }
        }
        let fetcher = ConcurrentFetcher(concurrency: Self.concurrency)

        var failure: String?
        func managerHits(_ cache: any FileCaching, delivery: FileCacheDelivery = .asynchronous) -> Double {
            var configuration = ObjectManager.Configuration()
            configuration.fileCache = cache
            configuration.policy.fileCacheDelivery = delivery
            let manager = ObjectManager(configuration: configuration)
            let decoder = PayloadDecoder()
            do {
                let rate = try fetcher.objectsPerSecond(urls, expectedSize: objectSize) { url in
                    try await manager.object(for: ObjectRequest(url: url), decoder: decoder).bytes.count
                }
                let statistics = manager.statistics
                if statistics.fileCacheHits != urls.count || statistics.networkRequests != 0 {
                    failure = "\(statistics.fileCacheHits) file-cache hits, \(statistics.networkRequests) requests"
                }
                return rate
            } catch {
                failure = "manager: \(error)"
                return 0
            }
        }
        func plainReads(_ files: [URL]) -> Double {
            let fileURLs = files.map { URL(string: "file://" + $0.path)! }
            do {
                return try fetcher.objectsPerSecond(fileURLs, expectedSize: objectSize) { url in
                    try Data(contentsOf: url).count
                }
            } catch {
                failure = "Data(contentsOf:): \(error)"
                return 0
            }
        }
        let samples = context.measurement(full: 5, quick: 2).run([
            { managerHits(fileCache) },
            { plainReads(files[0]) },
            { managerHits(bigFileCache) },
            { plainReads(files[1]) },
            { managerHits(fileCache, delivery: .synchronous) },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let perSecond = { (value: Double) in Format.number(value) + "/s" }
        return [
            .comparing(
                "\(Format.grouped(Self.objectCount)) `FileCache` hits with a cold memory cache", ours: samples[0],
                baseline: samples[1], baselineName: "`Data(contentsOf:)`", write: perSecond, direction: .atLeast,
                limit: 0.8, target: "≥ 0.8×",
                notes: [
                    "objects per second, \(Self.concurrency) reads in flight on both sides, files on "
                        + "\(directory.fileSystem) (in the page cache after the first round); a new manager per repetition; "
                        + "each hit is looked up, read, checked against its CRC-32, decoded and delivered; all hits, no request"
                ]),
            .comparing(
                "\(Format.grouped(Self.objectCount)) `BigFileCache` hits with a cold memory cache", ours: samples[2],
                baseline: samples[3], baselineName: "`Data(contentsOf:)`", write: perSecond, direction: .atLeast,
                limit: 0.8, target: "≥ 0.8×"),
            ResultRow(
                scenario: "(diagnostic) the `FileCache` hits with `fileCacheDelivery: .synchronous`",
                ours: Format.median(samples[4], perSecond),
                baseline: "`Data(contentsOf:)`: \(Format.median(samples[1], perSecond))",
                ratio: Format.ratio(samples[4].pairedRatio(to: samples[1])), target: "—", met: nil,
                notes: [
                    "the policy, set for the whole manager, that reads and decodes every hit inside `manage`, on the "
                        + "caller's thread; under the default (rows above) an awaited hit of an entry up to `inMemoryThreshold` "
                        + "is also read on the awaiting task, while a `ManagedObjectUser`'s hit is read on the loading executor"
                ]),
        ]
    }
}
