import Foundation

/// Fetches a list of URLs with a fixed number of workers, each fetching one URL at a time, so
/// exactly `concurrency` fetches are in flight until the list runs out. Every side of a network
/// comparison runs through it, so they differ only in how one URL is fetched.
struct ConcurrentFetcher: Sendable {
    /// Fetches in flight.
    let concurrency: Int

    /// Fetches every URL with `fetch` (which returns the body size; it must equal `expectedSize`)
    /// and returns the objects per second.
    func objectsPerSecond(
        _ urls: [URL], expectedSize: Int, fetch: @escaping @Sendable (URL) async throws -> Int
    ) throws -> Double {
        try AsyncBridge.wait { [concurrency] in
            let queue = WorkQueue(count: urls.count)
            let seconds = try await Stopwatch.secondsAsync {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<concurrency {
                        group.addTask {
                            while let index = queue.take() {
                                let size = try await fetch(urls[index])
                                guard size == expectedSize else {
                                    throw BenchmarkFailure("\(urls[index].path): \(size) bytes, expected \(expectedSize)")
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            return Double(urls.count) / seconds
        }
    }
}
