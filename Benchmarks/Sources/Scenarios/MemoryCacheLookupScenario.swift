import Foundation
import ManagedCache

/// Memory-cache hits by key: `MemoryCache` (the manager's own, LRU refresh included) against a
/// `Dictionary` behind a `Mutex` and against `NSCache.object(forKey:)`, with the same 2,000 keys
/// looked up 100,000 times in the same shuffled order.
struct MemoryCacheLookupScenario: BenchmarkScenario {
    let identifier = "memory-cache"
    let usesNetwork = false

    /// Entries in each cache.
    static let entries = 2_000
    /// Lookups per repetition.
    static let lookups = 100_000

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let keys = Self.makeKeys(Self.entries)
        let payloads = keys.indices.map { Payload(Data(count: 64 + $0 % 64)) }
        let objects = payloads.map { CachedObject(object: $0, freshness: nil, cost: $0.bytes.count) }
        let order = Self.lookupOrder(entries: keys.count, lookups: Self.lookups)
        // Lookups use keys equal to the stored ones but not identical (their own string storage), as
        // a manager's requests do: equality then compares the bytes.
        let probes = keys.map { ObjectKey(dataKey: String(decoding: Array($0.dataKey.utf8), as: UTF8.self), variant: $0.variant) }

        let cache = MemoryCache<ObjectKey, CachedObject>(countLimit: keys.count, costLimit: Int.max)
        for (key, object) in zip(keys, objects) { cache.setValue(object, forKey: key, cost: object.cost) }
        let dictionary = LockedDictionary<ObjectKey, CachedObject>(Dictionary(uniqueKeysWithValues: zip(keys, objects)))
        // What an image cache keyed by the URL's text keeps: the text as the key, an object as the
        // value; looked up with equal but not identical strings, as above.
        let strings = LockedDictionary<String, Payload>(
            Dictionary(uniqueKeysWithValues: zip(keys.map(\.description), payloads)))
        let stringProbes = keys.map { String(decoding: Array($0.description.utf8), as: UTF8.self) }
        let nsKeys = keys.map { NSString(string: $0.description) }
        let nsCache = NSCache<NSString, Payload>()
        for (key, payload) in zip(nsKeys, payloads) { nsCache.setObject(payload, forKey: key) }

        var failure: String?
        let check = { (hits: Int, name: String) in
            if hits != order.count { failure = "\(name): \(hits) hits of \(order.count) lookups" }
        }
        let samples = context.measurement(full: 9, quick: 3).run([
            { Self.nanoseconds(order.count) { check(Self.lookUp(cache, probes, order), "MemoryCache") } },
            { Self.nanoseconds(order.count) { check(Self.lookUp(dictionary, probes, order), "Dictionary") } },
            { Self.nanoseconds(order.count) { check(Self.lookUp(nsCache, nsKeys, order), "NSCache") } },
            { Self.nanoseconds(order.count) { check(Self.lookUp(strings, stringProbes, order), "String Dictionary") } },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let perLookup = { (value: Double) in Format.number(value) + " ns" }
        let title =
            "memory-cache hit by key (lookup only), \(Format.grouped(keys.count)) entries, "
            + "\(Format.grouped(order.count)) lookups"
        return [
            .comparing(
                title, ours: samples[0], baseline: samples[1], baselineName: "`Dictionary` + `Mutex`",
                write: perLookup, direction: .atMost, limit: 1, target: "≤ 1.0×",
                notes: [
                    "ns per lookup, median (min–max) of \(samples[0].count) repetitions; keys are "
                        + "`ObjectKey`s of ~60-character URLs, looked up with equal but not identical keys; values are `CachedObject`s (the manager's own cache types); `MemoryCache` also moves each hit to the front of its LRU list"
                ]),
            .comparing(
                "memory-cache hit vs a `Dictionary<String, Payload>` + `Mutex` keyed by the key's text",
                ours: samples[0], baseline: samples[3], baselineName: "`Dictionary<String, Payload>` + `Mutex`",
                write: perLookup, direction: .atMost, limit: 1, target: "≤ 1.0×",
                notes: [
                    "`Payload` is a class: one reference per value, as `AnyObject` would be; the keys' text (~80 characters), looked up with equal but not identical strings: hashed "
                        + "and compared on every lookup, as a cache keyed by the URL string does; `ObjectKey` "
                        + "carries its hash, made once per key"
                ]),
            .comparing(
                "memory-cache hit vs `NSCache.object(forKey:)`", ours: samples[0], baseline: samples[2],
                baselineName: "`NSCache`", write: perLookup, direction: .atMost, limit: 0.2,
                target: "≤ 0.2× (≥ 5× faster)",
                notes: ["`NSCache<NSString, Payload>` keyed by the same keys' text"]),
        ]
    }

    /// `count` keys shaped like the manager's: an image URL and a decoder identifier.
    static func makeKeys(_ count: Int) -> [ObjectKey] {
        (0..<count).map { index in
            ObjectKey(
                dataKey: "https://images.example.com/photos/\(index)/thumbnail-160x160.jpg",
                variant: PayloadDecoder().identifier)
        }
    }

    /// `lookups` entry indices in a fixed pseudo-random order.
    static func lookupOrder(entries: Int, lookups: Int) -> [Int] {
        var generator = SeededGenerator(seed: 0x5EED)
        return (0..<lookups).map { _ in Int.random(in: 0..<entries, using: &generator) }
    }

    /// Runs `body` and returns the nanoseconds per operation for `operations` operations.
    static func nanoseconds(_ operations: Int, _ body: () -> Void) -> Double {
        Stopwatch.seconds(body) * 1e9 / Double(operations)
    }

    @inline(never)
    static func lookUp(_ cache: MemoryCache<ObjectKey, CachedObject>, _ keys: [ObjectKey], _ order: [Int]) -> Int {
        var hits = 0
        for index in order where cache.value(forKey: keys[index]) != nil { hits += 1 }
        return hits
    }

    @inline(never)
    static func lookUp(_ dictionary: LockedDictionary<ObjectKey, CachedObject>, _ keys: [ObjectKey], _ order: [Int]) -> Int {
        var hits = 0
        for index in order where dictionary.value(forKey: keys[index]) != nil { hits += 1 }
        return hits
    }

    @inline(never)
    static func lookUp(_ dictionary: LockedDictionary<String, Payload>, _ keys: [String], _ order: [Int]) -> Int {
        var hits = 0
        for index in order where dictionary.value(forKey: keys[index]) != nil { hits += 1 }
        return hits
    }

    @inline(never)
    static func lookUp(_ cache: NSCache<NSString, Payload>, _ keys: [NSString], _ order: [Int]) -> Int {
        var hits = 0
        for index in order where cache.object(forKey: keys[index]) != nil { hits += 1 }
        return hits
    }
}
