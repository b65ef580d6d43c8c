import Foundation
import ManagedCache

/// `manage` of a user whose object is in memory: eight reusable cells re-managed over 2,000
/// cached rows (as when scrolling back through rows already seen). Each call detaches the cell
/// from its old key, attaches it weakly to the new one and delivers the object synchronously,
/// before `manage` returns. Baseline: the same keys looked up in a `Dictionary` behind a `Mutex`.
struct ManageHitScenario: BenchmarkScenario {
    let identifier = "manage-hit"
    let usesNetwork = false

    /// Cells on screen, reused round-robin.
    static let cellCount = 8

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let entries = MemoryCacheLookupScenario.entries
        let operations = MemoryCacheLookupScenario.lookups
        let decoder = PayloadDecoder()
        let rows = (0..<entries).map { index in
            ObjectRequest(url: URL(string: "https://images.example.com/photos/\(index)/thumbnail-160x160.jpg")!)
        }
        let keys = rows.map { ObjectKey(dataKey: $0.dataKey, variant: decoder.identifier) }
        let objects = rows.indices.map { Payload(Data(count: 64 + $0 % 64)) }

        var configuration = ObjectManager.Configuration()
        configuration.memoryCacheCountLimit = 2 * entries
        let manager = ObjectManager(configuration: configuration)
        let cached = objects.map { CachedObject(object: $0, freshness: nil, cost: $0.bytes.count) }
        for (key, object) in zip(keys, cached) { manager.memoryCache.setValue(object, forKey: key, cost: object.cost) }
        let dictionary = LockedDictionary<ObjectKey, CachedObject>(Dictionary(uniqueKeysWithValues: zip(keys, cached)))
        let cells = (0..<Self.cellCount).map { _ in ReusableCell(rows: rows, decoder: decoder) }
        let order = MemoryCacheLookupScenario.lookupOrder(entries: entries, lookups: operations)

        var failure: String?
        let samples = context.measurement(full: 9, quick: 3).run([
            {
                manager.resetStatistics()
                let nanoseconds = MemoryCacheLookupScenario.nanoseconds(order.count) {
                    Self.manage(manager, cells, order)
                }
                let hits = manager.statistics.memoryHits
                if hits != order.count { failure = "\(hits) memory hits for \(order.count) manage calls" }
                for (index, cell) in cells.enumerated() {
                    let last = (0..<order.count).last { $0 % cells.count == index }!
                    if cell.object !== objects[order[last]] { failure = "cell \(index) shows the wrong object" }
                }
                return nanoseconds
            },
            {
                MemoryCacheLookupScenario.nanoseconds(order.count) {
                    if MemoryCacheLookupScenario.lookUp(dictionary, keys, order) != order.count {
                        failure = "dictionary missed"
                    }
                }
            },
            {
                MemoryCacheLookupScenario.nanoseconds(order.count) {
                    if Self.lookUp(manager, rows, decoder, order) != order.count { failure = "cachedObject missed" }
                }
            },
        ])
        let (ours, baseline) = (samples[0], samples[1])
        if let failure { throw BenchmarkFailure(failure) }
        return [
            .comparing(
                "`manage` of a user whose object is in memory (weak attach + synchronous ready callback)",
                ours: ours, baseline: baseline, baselineName: "`Dictionary` + `Mutex`",
                write: { Format.number($0) + " ns" }, direction: .atMost, limit: 5, target: "≤ 5×",
                notes: [
                    "\(Self.cellCount) reusable cells re-managed \(Format.grouped(order.count)) times over "
                        + "\(Format.grouped(entries)) rows in memory; each call re-points the cell (one atomic store), "
                        + "detaches it from its old key, attaches it to the new one and delivers the object before returning"
                ]),
            ResultRow(
                scenario: "(diagnostic) `cachedObject(for:decoder:)` on the same rows: the key and the memory-cache lookup alone",
                ours: Format.median(samples[2], { Format.number($0) + " ns" }),
                baseline: "`Dictionary` + `Mutex`: \(Format.median(baseline, { Format.number($0) + " ns" }))",
                ratio: Format.ratio(samples[2].pairedRatio(to: baseline)), target: "—", met: nil,
                notes: [
                    "builds the `ObjectKey` from the request (`dataKey`) and the decoder, looks it up in the manager's "
                        + "memory cache and casts the object: the part of a hit `manage` does before taking its lock"
                ]),
        ]
    }

    @inline(never)
    static func lookUp(_ manager: ObjectManager, _ rows: [ObjectRequest], _ decoder: PayloadDecoder, _ order: [Int]) -> Int {
        var hits = 0
        for row in order where manager.cachedObject(for: rows[row], decoder: decoder) != nil { hits += 1 }
        return hits
    }

    @inline(never)
    static func manage(_ manager: ObjectManager, _ cells: [ReusableCell], _ order: [Int]) {
        for (index, row) in order.enumerated() {
            let cell = cells[index % cells.count]
            cell.show(row: row)
            manager.manage(cell)
        }
    }
}
