import Foundation
import ManagedCache

/// Memory-cache inserts that evict (target: at most 1.3× the baseline): a `MemoryCache` with a count limit of
/// 1,000 receives 100,000 inserts cycling over 2,000 keys, so every insert past the first 1,000
/// evicts the least recently used entry; the baseline is a `Dictionary` behind a `Mutex` that
/// inserts and removes the key inserted 1,000 inserts earlier (told which, no bookkeeping).
/// Same key and value types as the manager's (`ObjectKey`, `CachedObject`).
struct MemoryCacheInsertScenario: BenchmarkScenario {
    let identifier = "memory-cache-insert"
    let usesNetwork = false

    static let countLimit = 1_000
    static let distinctKeys = 2_000
    static let inserts = 100_000

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let keys = MemoryCacheLookupScenario.makeKeys(Self.distinctKeys)
        // Equal but not identical keys, as a manager sees them (each request builds its own).
        let probes = keys.map { ObjectKey(dataKey: String(decoding: Array($0.dataKey.utf8), as: UTF8.self), variant: $0.variant) }
        let objects = keys.indices.map { CachedObject(object: Payload(Data(count: 64 + $0 % 64)), freshness: nil, cost: 64 + $0 % 64) }
        var failure: String?

        func insertIntoCache(_ setValue: Bool) -> Double {
            let cache = MemoryCache<ObjectKey, CachedObject>(countLimit: Self.countLimit, costLimit: Int.max)
            let nanoseconds = MemoryCacheLookupScenario.nanoseconds(Self.inserts) {
                if setValue { Self.setValues(cache, probes, objects) } else { Self.insert(cache, probes, objects) }
            }
            if cache.count != Self.countLimit { failure = "MemoryCache kept \(cache.count) entries" }
            return nanoseconds
        }
        func insertIntoDictionary() -> Double {
            let dictionary = LockedDictionary<ObjectKey, CachedObject>([:])
            let nanoseconds = MemoryCacheLookupScenario.nanoseconds(Self.inserts) {
                Self.insert(dictionary, probes, objects)
            }
            let count = dictionary.storage.withLock { $0.count }
            if count != Self.countLimit { failure = "Dictionary kept \(count) entries" }
            return nanoseconds
        }
        let samples = context.measurement(full: 9, quick: 3).run([
            { insertIntoCache(false) },
            { insertIntoDictionary() },
            { insertIntoCache(true) },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let perInsert = { (value: Double) in Format.number(value) + " ns" }
        let note =
            "ns per insert, median (min–max) of \(samples[0].count) repetitions; \(Format.grouped(Self.inserts)) "
            + "inserts cycling over \(Format.grouped(Self.distinctKeys)) `ObjectKey`s (equal to, not identical with, "
            + "the stored ones) with a count limit of \(Format.grouped(Self.countLimit)): every insert after the first "
            + "\(Format.grouped(Self.countLimit)) evicts one entry; the baseline inserts and removes the key "
            + "\(Format.grouped(Self.countLimit)) inserts back"
        return [
            .comparing(
                "memory-cache insert with eviction (`insert(_:forKey:cost:)`), count limit \(Format.grouped(Self.countLimit))",
                ours: samples[0], baseline: samples[1], baselineName: "`Dictionary` + `Mutex`", write: perInsert,
                direction: .atMost, limit: 1.3, target: "≤ 1.3×", notes: [note]),
            .diagnostic(
                "(diagnostic) the same through `setValue(_:forKey:cost:)`, which returns the evicted values in an array",
                ours: samples[2], baseline: samples[1], baselineName: "`Dictionary` + `Mutex`", write: perInsert,
                notes: ["one array allocated per insert that evicts"]),
        ]
    }

    @inline(never)
    static func insert(_ cache: MemoryCache<ObjectKey, CachedObject>, _ keys: [ObjectKey], _ objects: [CachedObject]) {
        for step in 0..<inserts {
            let index = step % keys.count
            cache.insert(objects[index], forKey: keys[index], cost: objects[index].cost)
        }
    }

    @inline(never)
    static func setValues(_ cache: MemoryCache<ObjectKey, CachedObject>, _ keys: [ObjectKey], _ objects: [CachedObject]) {
        for step in 0..<inserts {
            let index = step % keys.count
            BlackHole.consume(cache.setValue(objects[index], forKey: keys[index], cost: objects[index].cost))
        }
    }

    @inline(never)
    static func insert(_ dictionary: LockedDictionary<ObjectKey, CachedObject>, _ keys: [ObjectKey], _ objects: [CachedObject]) {
        for step in 0..<inserts {
            let index = step % keys.count
            let evicting = step >= countLimit ? keys[(step - countLimit) % keys.count] : nil
            dictionary.insert(objects[index], forKey: keys[index], evicting: evicting)
        }
    }
}
