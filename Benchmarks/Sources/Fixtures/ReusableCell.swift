import ManagedCache
import ManagedCacheLocking

#if canImport(Glibc)
import Synchronization
#endif

/// A table cell reduced to what the manager sees: a reusable `ManagedObjectUser` pointed at one
/// row of a shared table model at a time, keeping the object it was given as a view keeps its image.
///
/// Pointing it at another row is one relaxed atomic store, so the manage-hit scenario measures
/// the manager, not the cell.
final class ReusableCell: ManagedObjectUser {
    let objectDecoder: PayloadDecoder
    private let rows: [ObjectRequest]
    #if canImport(Glibc)
    private let row = Atomic<Int>(-1)
    #else
    // `Atomic` needs macOS 15 and iOS 18; the benchmarks run on Linux.
    private let row = Lock<Int>(-1)
    #endif
    private let shown = Lock<Payload?>(nil)
    /// The cell's place among its table's cells: where a floor that keeps a record per user in
    /// the user itself finds it (`MergedTableFloor`, as HJCache's users hold their handler).
    let slot: Int

    /// Creates a cell over the table model `rows`, showing no row yet, at `slot` among its table's
    /// cells.
    init(rows: [ObjectRequest], decoder: PayloadDecoder, slot: Int = 0) {
        self.rows = rows
        self.objectDecoder = decoder
        self.slot = slot
    }

    /// Reuses the cell for `row` (the next `manage` loads it).
    func show(row: Int) {
        #if canImport(Glibc)
        self.row.store(row, ordering: .relaxed)
        #else
        self.row.withLock { $0 = row }
        #endif
    }

    var objectRequest: ObjectRequest? {
        #if canImport(Glibc)
        let current = row.load(ordering: .relaxed)
        #else
        let current = row.withLock { $0 }
        #endif
        return current >= 0 ? rows[current] : nil
    }

    func managedObjectReady(_ object: Payload, origin: DataOrigin, request: ObjectRequest) {
        shown.withLock { $0 = object }
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        shown.withLock { $0 = nil }
    }

    /// The object the cell shows now.
    var object: Payload? { shown.withLock { $0 } }
}
