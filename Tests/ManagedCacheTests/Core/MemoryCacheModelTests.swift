import Foundation
import ManagedCache
import Testing

/// `MemoryCache` against a plain model (an array in recency order) over random operations, with
/// keys whose hashes collide on purpose so that the key table's probe runs are long and its
/// deletions (backward shifts) move entries around.
@Suite struct MemoryCacheModelTests {
    /// A key whose hash takes only a few values.
    struct CollidingKey: Hashable, Sendable, CustomStringConvertible {
        var number: Int
        static func == (lhs: Self, rhs: Self) -> Bool { lhs.number == rhs.number }
        func hash(into hasher: inout Hasher) { hasher.combine(number % 5) }
        var description: String { "\(number)" }
    }

    /// The model: entries from most to least recent, evicted from the end.
    struct Model {
        var entries: [(key: Int, value: Int, cost: Int)] = []
        let countLimit: Int
        let costLimit: Int

        var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

        mutating func value(_ key: Int) -> Int? {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = entries.remove(at: index)
            entries.insert(entry, at: 0)
            return entry.value
        }

        mutating func insert(_ value: Int, _ key: Int, cost: Int) -> [Int] {
            var evicted: [Int] = []
            if let index = entries.firstIndex(where: { $0.key == key }) { evicted.append(entries.remove(at: index).value) }
            guard countLimit > 0, cost <= costLimit else { return evicted + [value] }
            entries.insert((key, value, cost), at: 0)
            while entries.count > countLimit || totalCost > costLimit { evicted.append(entries.removeLast().value) }
            return evicted
        }

        mutating func remove(_ key: Int) -> Int? {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            return entries.remove(at: index).value
        }
    }

    @Test(arguments: [(40, 1_000), (7, 60), (300, 100_000)])
    func randomOperationsMatchTheModel(countLimit: Int, costLimit: Int) {
        var generator = SystemRandomNumberGenerator()
        let cache = MemoryCache<CollidingKey, Int>(countLimit: countLimit, costLimit: costLimit)
        var model = Model(countLimit: countLimit, costLimit: costLimit)
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<120, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                #expect(cache.value(forKey: CollidingKey(number: key)) == model.value(key))
            case 4..<7:
                let cost = Int.random(in: 1...30, using: &generator)
                #expect(cache.setValue(step, forKey: CollidingKey(number: key), cost: cost) == model.insert(step, key, cost: cost))
            case 7:
                let cost = Int.random(in: 1...30, using: &generator)
                cache.insert(step, forKey: CollidingKey(number: key), cost: cost)
                _ = model.insert(step, key, cost: cost)
            case 8:
                #expect(cache.removeValue(forKey: CollidingKey(number: key)) == model.remove(key))
            default:
                #expect(cache.contains(CollidingKey(number: key)) == model.entries.contains { $0.key == key })
            }
            if step % 97 == 0 {
                #expect(cache.keysFromMostRecent.map(\.number) == model.entries.map(\.key))
                #expect(cache.totalCost == model.totalCost)
                #expect(cache.count == model.entries.count)
            }
        }
    }

    @Test func evictedValuesAreReleasedOutsideTheLock() {
        // A value whose deinit uses the cache would deadlock if it were released under the lock.
        final class Probe: Sendable {
            let cache: MemoryCache<Int, Probe>
            init(cache: MemoryCache<Int, Probe>) { self.cache = cache }
            deinit { _ = cache.count }
        }
        let cache = MemoryCache<Int, Probe>(countLimit: 2, costLimit: 100)
        for key in 0..<10 { cache.insert(Probe(cache: cache), forKey: key, cost: 1) }
        #expect(cache.count == 2)
        #expect(cache.keysFromMostRecent == [9, 8])
    }
}
