import Foundation
import ManagedCache
import TestSupport
import Testing

/// Least frequently used: evicts the entry read the fewest times (the oldest number among
/// equals), never the one just stored.
struct LeastFrequentlyUsed: MemoryCacheEvictionPolicy {
    var reads: [Int: Int] = [:]
    var newest: Int?

    mutating func entryStored(_ entry: Int, cost: Int) {
        reads[entry] = 0
        newest = entry
    }

    mutating func entryRead(_ entry: Int) { reads[entry, default: 0] += 1 }

    mutating func entryRemoved(_ entry: Int) { reads[entry] = nil }

    mutating func entryToEvict() -> Int? {
        reads.filter { $0.key != newest }.min { ($0.value, $0.key) < ($1.value, $1.key) }?.key
    }
}

/// Pushes out the load that has received the fewest bytes, the new one aside.
struct LeastProgressFirst: LoadingBufferPushOutPolicy {
    func loadToPushOut(_ loads: [BufferedLoad]) -> Int {
        loads.indices.dropLast().min { loads[$0].progress.receivedBytes < loads[$1].progress.receivedBytes } ?? loads.count - 1
    }
}

/// A second implementation of each policy seam is obeyed, and differs observably from the default.
@Suite struct EvictionPolicyTests {
    /// a read three times, b twice, c once and last: LRU evicts a, LFU evicts c.
    private func fill(_ cache: MemoryCache<String, Int>) {
        cache.setValue(1, forKey: "a", cost: 1)
        cache.setValue(2, forKey: "b", cost: 1)
        cache.setValue(3, forKey: "c", cost: 1)
        for key in ["a", "a", "a", "b", "b", "c"] { _ = cache.value(forKey: key) }
        cache.setValue(4, forKey: "d", cost: 1)
    }

    @Test func theDefaultEvictsTheLeastRecentlyUsedEntry() {
        let cache = MemoryCache<String, Int>(countLimit: 3, costLimit: 100)
        fill(cache)
        #expect(!cache.contains("a"))
        #expect(["b", "c", "d"].allSatisfy { cache.contains($0) })
    }

    @Test func aLeastFrequentlyUsedPolicyEvictsTheEntryReadLeast() {
        let cache = MemoryCache<String, Int>(countLimit: 3, costLimit: 100, eviction: .custom { LeastFrequentlyUsed() })
        fill(cache)
        #expect(!cache.contains("c"))
        #expect(["a", "b", "d"].allSatisfy { cache.contains($0) })
        // Over the cost limit too, and after `removeAll` (a new policy).
        cache.removeAll()
        cache.setValue(1, forKey: "x", cost: 40)
        cache.setValue(2, forKey: "y", cost: 40)
        _ = cache.value(forKey: "x")
        _ = cache.value(forKey: "x")
        _ = cache.value(forKey: "y")
        cache.setValue(3, forKey: "z", cost: 40)
        cache.costLimit = 90
        #expect(cache.contains("x") && !cache.contains("y") && cache.contains("z"))
    }

    @Test func theManagersMemoryCacheUsesTheConfiguredEviction() async {
        let loader = ScriptedDataLoader()
        for path in ["a", "b", "c"] { loader.script(path, .body(Data(path.utf8))) }
        let manager = makeScriptedManager(loader: loader, memoryCount: 2) {
            $0.memoryCacheEviction = .custom { LeastFrequentlyUsed() }
        }
        for path in ["a", "b"] {
            let user = RecordingUser(request(path), decoder: BlobDecoder())
            manager.manage(user)
            #expect(await waitUntil { user.objects.count == 1 })
        }
        // b is read twice, a once and last: LRU would evict b, LFU evicts a.
        for path in ["b", "b", "a"] {
            let hit = RecordingUser(request(path), decoder: BlobDecoder())
            manager.manage(hit)
            #expect(hit.origins == [.memory])
        }
        let third = RecordingUser(request("c"), decoder: BlobDecoder())
        manager.manage(third)
        #expect(await waitUntil { third.objects.count == 1 })
        let cached = { (path: String) in
            manager.memoryCache.contains(ObjectKey(dataKey: request(path).dataKey, variant: BlobDecoder().identifier))
        }
        #expect(!cached("a"))
        #expect(cached("b") && cached("c"))
    }

    /// a has received 100 bytes, b 1 (b is newer): the default pushes out a, the oldest; least
    /// progress pushes out b.
    @Test(arguments: [false, true])
    func theLoadingBufferPushesOutTheLoadItsPolicyChooses(leastProgress: Bool) async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data(repeating: 1, count: 100), rest: Data([1])))
        loader.script("b", .held(firstChunk: Data([2]), rest: Data([2])))
        loader.script("c", .held(firstChunk: Data([3]), rest: Data([3])))
        let manager = makeScriptedManager(loader: loader, bufferSize: 2) {
            if leastProgress { $0.loadingBufferPushOut = LeastProgressFirst() }
        }
        let users = ["a", "b", "c"].map { RecordingUser(request($0), decoder: BlobDecoder()) }
        manager.manage(users[0])
        manager.manage(users[1])
        #expect(await waitUntil { users[0].progress.last?.receivedBytes == 100 && users[1].progress.last?.receivedBytes == 1 })
        manager.manage(users[2])
        let pushedOut = leastProgress ? 1 : 0
        #expect(users[pushedOut].errors == [.cancelled(.loadingBufferOverflow)])
        #expect(users[1 - pushedOut].errors.isEmpty)
        for path in ["a", "b", "c"] { loader.release(path) }
        #expect(await waitUntil { users[1 - pushedOut].objects.count == 1 && users[2].objects.count == 1 })
    }
}
