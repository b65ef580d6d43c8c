import Foundation
import ManagedCache
import ManagedCacheLocking

/// How many times one call takes the manager's lock: a `manage` on a memory hit, and a `manage`
/// of a URL no cache holds, with a `FileCache`, whose body arrives in one chunk, from the call to
/// the user's ready callback. Printed beside the `manage-hit` rows; counts, not times, so one
/// run tells.
enum LockSections {
    /// A loader that answers every request at once with one chunk.
    struct OneChunkLoader: DataLoading {
        let body = Data(count: 256)

        func canLoad(_ url: URL) -> Bool { true }

        func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
            let response = DataLoadResponse(statusCode: 200, expectedContentLength: body.count, url: request.url)
            try receiver.didReceive(response: response)
            try receiver.didReceive(body)
            return response
        }
    }

    /// A user that signals its final callback.
    final class SignallingUser: ManagedObjectUser {
        let objectRequest: ObjectRequest?
        let objectDecoder = PayloadDecoder()
        let done = DispatchSemaphore(value: 0)

        init(_ request: ObjectRequest) { objectRequest = request }
        func managedObjectReady(_ object: Payload, origin: DataOrigin, request: ObjectRequest) { done.signal() }
        func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { done.signal() }
    }

    /// Lock sections per uncached `manage` (a one-chunk body, a `FileCache`), averaged over
    /// `calls` calls of new URLs, each waited for (and a moment more, so the fetch's last steps
    /// after the callback are counted too).
    static func perUncachedManage(calls: Int = 20) throws -> Double {
        let directory = try ScratchDirectory(prefix: "lock-sections")
        var configuration = ObjectManager.Configuration()
        configuration.dataLoader = OneChunkLoader()
        configuration.fileCache = try FileCache(directory: directory.url)
        configuration.loadRateLimit = nil
        let manager = ObjectManager(configuration: configuration)
        var total: UInt64 = 0
        for call in 0..<calls {
            let user = SignallingUser(ObjectRequest(url: URL(string: "https://images.example.com/uncached/\(call).jpg")!))
            let before = manager.lockSectionCount
            manager.manage(user)
            user.done.wait()
            // The fetch's last steps may follow the callback: count until nothing takes the lock
            // for 20 ms (asking the count does not take it).
            var (count, quietSince) = (manager.lockSectionCount, Date())
            while Date().timeIntervalSince(quietSince) < 0.02 {
                usleep(1_000)
                let now = manager.lockSectionCount
                if now != count { (count, quietSince) = (now, Date()) }
            }
            total += count - before
        }
        return Double(total) / Double(calls)
    }

    /// Lock sections per `manage` of `cells` over `order`, every row in memory.
    static func perMemoryHit(_ manager: ObjectManager, _ cells: [ReusableCell], _ order: [Int]) -> Double {
        let before = manager.lockSectionCount
        ManageHitScenario.manage(manager, cells, order)
        return Double(manager.lockSectionCount - before) / Double(order.count)
    }
}
