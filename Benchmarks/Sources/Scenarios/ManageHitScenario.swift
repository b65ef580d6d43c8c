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
        let cells = (0..<Self.cellCount).map { ReusableCell(rows: rows, decoder: decoder, slot: $0) }
        let order = MemoryCacheLookupScenario.lookupOrder(entries: entries, lookups: operations)
        let handlerPerKey = HandlerPerKeyFloor(memoryCache: manager.memoryCache)
        let mergedTable = MergedTableFloor(keys: keys, objects: objects)
        let lookupOnly = LookupOnlyFloor(keys: keys, objects: objects)
        let compactTable = CompactTableFloor(keys: keys, objects: objects)
        /// Runs `floor` over every call of the order and checks what the cells show.
        func measureFloor(_ floor: (ReusableCell) -> Void) -> Double {
            let nanoseconds = MemoryCacheLookupScenario.nanoseconds(order.count) {
                for (index, row) in order.enumerated() {
                    let cell = cells[index % cells.count]
                    cell.show(row: row)
                    floor(cell)
                }
            }
            for (index, cell) in cells.enumerated() {
                let last = (0..<order.count).last { $0 % cells.count == index }!
                if cell.object !== objects[order[last]] { failure = "a floor left cell \(index) showing the wrong object" }
            }
            return nanoseconds
        }

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
            { measureFloor { handlerPerKey.manage($0, variant: decoder.identifier) } },
            { measureFloor { mergedTable.manage($0, variant: decoder.identifier) } },
            { measureFloor { mergedTable.manage($0, variant: decoder.identifier, recordInUser: true) } },
            { measureFloor { lookupOnly.manage($0, variant: decoder.identifier) } },
            { measureFloor { compactTable.manage($0, variant: decoder.identifier) } },
        ])
        let (ours, baseline) = (samples[0], samples[1])
        if let failure { throw BenchmarkFailure(failure) }
        let hitSections = LockSections.perMemoryHit(manager, cells, order)
        let uncachedSections = try LockSections.perUncachedManage()
        return [
            .comparing(
                "`manage` of a user whose object is in memory (weak attach + synchronous ready callback)",
                ours: ours, baseline: baseline, baselineName: "`Dictionary` + `Mutex`",
                write: { Format.number($0) + " ns" }, direction: .atMost, limit: 3, target: "≤ 3×",
                notes: [
                    "\(Self.cellCount) reusable cells re-managed \(Format.grouped(order.count)) times over "
                        + "\(Format.grouped(entries)) rows in memory; each call re-points the cell (one atomic store), "
                        + "detaches it from its old key, attaches it to the new one and delivers the object before returning"
                ]),
            ResultRow(
                scenario: "manager lock sections per call: `manage` on a memory hit / an uncached `manage` "
                    + "(a `FileCache`, a one-chunk body) to its callback",
                ours: String(format: "%.2f / %.2f", hitSections, uncachedSections), baseline: "—", ratio: "—",
                target: "1 / ≤ 3", met: hitSections <= 1 && uncachedSections <= 3,
                notes: [
                    "counted by the manager under its lock (`lockSectionCount`): the hit over the same calls as the first row; "
                        + "the uncached call over 20 new URLs of an in-process loader, each until nothing takes the lock for 20 ms"
                ]),
            diagnosticRow(
                "(diagnostic) `cachedObject(for:decoder:)` on the same rows: the key and the memory-cache lookup alone",
                samples[2], baseline: baseline,
                note: "builds the `ObjectKey` from the request (`dataKey`) and the decoder, looks it up in the manager's "
                    + "memory cache and casts the object: the part of a hit `manage` does before taking its lock"),
            diagnosticRow(
                "(diagnostic) the floor of this design: a memory-cache table and a table of handlers",
                samples[3], baseline: baseline,
                note: "the same calls through the bare data structures of the engine's design (`HandlerPerKeyFloor`): "
                    + "the request's key, a `MemoryCache` lookup, then under one lock the cell's record, the old row's "
                    + "handler dropped and the new row's created; then the cell's callback"),
            diagnosticRow(
                "(diagnostic) the floor of a design whose memory-cache entries are the handlers",
                samples[4], baseline: baseline,
                note: "the same calls through `MergedTableFloor`: under one lock, the entry by key (marked used) and "
                    + "the cell's record, moved from its old entry's list to the new one's; then the cell's callback"),
            diagnosticRow(
                "(diagnostic) the same, with each user's record kept in the user (no table of users)",
                samples[5], baseline: baseline,
                note: "`MergedTableFloor` finding the cell's record by the cell's slot in an array, as if the user "
                    + "protocol asked every user for a stored slot (HJCache's users hold their handler)"),
            diagnosticRow(
                "(diagnostic) the floor of any design: the cell's request, one `Dictionary` lookup, the callback",
                samples[6], baseline: baseline,
                note: "the same calls through `LookupOnlyFloor`: the cell is given its row and asked for its request, "
                    + "the key is built, looked up in the baseline's locked `Dictionary`, and the cell is called; "
                    + "nothing is attached"),
            diagnosticRow(
                "(diagnostic) the merged design without references on the hit path",
                samples[7], baseline: baseline,
                note: "`CompactTableFloor`: entries and users' records are values in arrays, found by the key's index "
                    + "and the user's slot; an entry lists its users by record index, so moving a cell rewrites a few "
                    + "integers; then the cell's callback"),
        ]
    }

    /// A row with no target: a side's time per call against the baseline's.
    private func diagnosticRow(_ scenario: String, _ side: Samples, baseline: Samples, note: String) -> ResultRow {
        ResultRow(
            scenario: scenario, ours: Format.median(side, { Format.number($0) + " ns" }),
            baseline: "`Dictionary` + `Mutex`: \(Format.median(baseline, { Format.number($0) + " ns" }))",
            ratio: Format.ratio(side.pairedRatio(to: baseline)), target: "—", met: nil, notes: [note])
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
