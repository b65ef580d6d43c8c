import Foundation
import ManagedCache
import Testing

@Suite struct MemoryCacheTests {
    @Test func evictsTheLeastRecentlyUsedEntryByCount() {
        let cache = MemoryCache<String, Int>(countLimit: 3, costLimit: 1_000)
        cache.setValue(1, forKey: "a", cost: 1)
        cache.setValue(2, forKey: "b", cost: 1)
        cache.setValue(3, forKey: "c", cost: 1)
        #expect(cache.value(forKey: "a") == 1)  // a hit makes "a" the most recent
        cache.setValue(4, forKey: "d", cost: 1)
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.keysFromMostRecent == ["d", "a", "c"])
        #expect(cache.count == 3)
    }

    @Test func evictsByTotalCostUntilUnderTheByteLimit() {
        let cache = MemoryCache<String, Int>(countLimit: 100, costLimit: 100)
        cache.setValue(1, forKey: "a", cost: 40)
        cache.setValue(2, forKey: "b", cost: 40)
        _ = cache.value(forKey: "a")
        let evicted = cache.setValue(3, forKey: "c", cost: 40)
        #expect(evicted == [2])
        #expect(cache.totalCost == 80)
        #expect(cache.keysFromMostRecent == ["c", "a"])
    }

    @Test func anEntryCostlierThanTheLimitIsNotStored() {
        let cache = MemoryCache<String, Int>(countLimit: 10, costLimit: 50)
        cache.setValue(1, forKey: "small", cost: 10)
        cache.setValue(2, forKey: "huge", cost: 51)
        #expect(cache.value(forKey: "huge") == nil)
        #expect(cache.value(forKey: "small") == 1)
    }

    @Test func zeroLimitsKeepNothing() {
        let byCount = MemoryCache<String, Int>(countLimit: 0, costLimit: 100)
        byCount.setValue(1, forKey: "a", cost: 1)
        #expect(byCount.count == 0)
        let byCost = MemoryCache<String, Int>(countLimit: 10, costLimit: 0)
        byCost.setValue(1, forKey: "a", cost: 1)
        #expect(byCost.count == 0)
    }

    @Test func replacingAKeyUpdatesItsCostAndRecency() {
        let cache = MemoryCache<String, Int>(countLimit: 10, costLimit: 100)
        cache.setValue(1, forKey: "a", cost: 30)
        cache.setValue(2, forKey: "b", cost: 30)
        cache.setValue(3, forKey: "a", cost: 10)
        #expect(cache.totalCost == 40)
        #expect(cache.keysFromMostRecent == ["a", "b"])
        #expect(cache.value(forKey: "a") == 3)
    }

    @Test func loweringLimitsEvictsAtOnceAndRemoveAllEmpties() {
        let cache = MemoryCache<Int, Int>(countLimit: 100, costLimit: 10_000)
        for index in 0..<50 { cache.setValue(index, forKey: index, cost: 10) }
        cache.countLimit = 10
        #expect(cache.count == 10)
        #expect(cache.keysFromMostRecent == Array((40..<50).reversed()))
        cache.costLimit = 50
        #expect(cache.count == 5)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.setValue(1, forKey: 1, cost: 1)
        #expect(cache.value(forKey: 1) == 1)
    }

    @Test func slotsAreReusedAfterRemovalWithoutCorruptingOrder() {
        let cache = MemoryCache<Int, Int>(countLimit: 8, costLimit: 1_000)
        for round in 0..<100 {
            for index in 0..<8 { cache.setValue(round * 8 + index, forKey: index, cost: 1) }
            cache.removeValue(forKey: round % 8)
            #expect(cache.count == 7)
        }
        #expect(Set(cache.keysFromMostRecent).count == 7)
    }

    @Test func concurrentUseKeepsTheLimits() async {
        let cache = MemoryCache<Int, Int>(countLimit: 64, costLimit: 640)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<5_000 {
                        let key = (worker * 31 + index) % 200
                        if index % 3 == 0 { cache.setValue(index, forKey: key, cost: 10) } else { _ = cache.value(forKey: key) }
                    }
                }
            }
        }
        #expect(cache.count <= 64)
        #expect(cache.totalCost <= 640)
        #expect(cache.keysFromMostRecent.count == cache.count)
    }
}
