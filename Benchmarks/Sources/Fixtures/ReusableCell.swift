import ManagedCache
import ManagedCacheLocking

/// A table cell reduced to what the manager sees: a reusable `ManagedObjectUser` pointed at one
/// row of a shared table model at a time, keeping the object it was given as a view keeps its image.
///
/// Pointing it at another row is one relaxed atomic store, so the manage-hit scenario measures
/// the manager, not the cell.
final class ReusableCell: ManagedObjectUser {
    let objectDecoder: PayloadDecoder
    private let rows: [ObjectRequest]
    private let row = Lock<Int>(-1)
    private let shown = Lock<Payload?>(nil)

    /// Creates a cell over the table model `rows`, showing no row yet.
    init(rows: [ObjectRequest], decoder: PayloadDecoder) {
        self.rows = rows
        self.objectDecoder = decoder
    }

    /// Reuses the cell for `row` (the next `manage` loads it).
    func show(row: Int) {
        self.row.withLock { $0 = row }
    }

    var objectRequest: ObjectRequest? {
        let current = row.withLock { $0 }
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
