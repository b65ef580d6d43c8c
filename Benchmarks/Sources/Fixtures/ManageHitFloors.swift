import Foundation
import ManagedCache

#if canImport(Glibc)
import Synchronization
#endif

/// The least a `manage` on a memory hit can cost in two designs, written as the bare data
/// structures each needs and nothing else: no policies, statistics, delivery checks, sweeps or
/// budgets. Both read the user's request and build its key as `manage` does, and call the user as
/// `manage` does; they are measured beside `manage` and its `Dictionary` baseline.
///
/// - `HandlerPerKeyFloor`, the engine's design: the memory cache is one table and the handlers
///   (one per key that has users) another, so a cell moving to a row nobody else shows drops the
///   old row's handler and creates the new row's.
/// - `MergedTableFloor`: the memory cache's entries are the handlers. A hit finds the entry that
///   lists its users; moving a cell touches two entries and creates nothing.
/// - `LookupOnlyFloor`: no design at all; the user's request, its key, one lookup in a locked
///   `Dictionary` and the callback. What any `manage` of this benchmark's cells costs at least.
enum ManageHitFloors {
    /// A user's record: the user, weakly, and where it is listed.
    final class Record<Place: AnyObject> {
        weak var user: ReusableCell?
        var place: Place?

        init(user: ReusableCell) {
            self.user = user
        }
    }

    /// The users listed on a handler or an entry: the first inline (most objects have one user),
    /// the others in an array.
    struct Users<Place: AnyObject> {
        private var first: Record<Place>?
        private var others: [Record<Place>] = []

        var isEmpty: Bool { first == nil && others.isEmpty }

        mutating func append(_ record: Record<Place>) {
            if first == nil { first = record } else { others.append(record) }
        }

        mutating func remove(_ record: Record<Place>) {
            if first === record {
                first = others.popLast()
            } else if let index = others.firstIndex(where: { $0 === record }) {
                others.remove(at: index)
            }
        }
    }
}

/// The engine's design at its floor: a memory-cache lookup (the manager's own `MemoryCache`),
/// then, under one lock, the user's record by identifier, the old key's handler (dropped when
/// its last user leaves) and the new key's handler (created, since nobody shows that row).
final class HandlerPerKeyFloor: Sendable {
    final class Handler {
        var users = ManageHitFloors.Users<Handler>()
        let key: ObjectKey

        init(key: ObjectKey) {
            self.key = key
        }
    }

    struct Tables {
        var handlers: [ObjectKey: Handler] = [:]
        var records: [ObjectIdentifier: ManageHitFloors.Record<Handler>] = [:]
    }

    private let memoryCache: MemoryCache<ObjectKey, CachedObject>
    private let tables = BaselineLock(Tables())

    /// A floor over `memoryCache`, holding the objects the manager's holds.
    init(memoryCache: MemoryCache<ObjectKey, CachedObject>) {
        self.memoryCache = memoryCache
    }

    /// Attaches `cell` to the handler of the row it shows and gives it the object.
    func manage(_ cell: ReusableCell, variant: String) {
        guard let request = cell.objectRequest else { return }
        let key = request.objectKey(variant: variant)
        guard let cached = memoryCache.value(forKey: key), let object = cached.object as? Payload else { return }
        let userID = ObjectIdentifier(cell)
        tables.withLock { tables in
            let record: ManageHitFloors.Record<Handler>
            if let existing = tables.records[userID] {
                record = existing
            } else {
                record = ManageHitFloors.Record(user: cell)
                tables.records[userID] = record
            }
            if let old = record.place {
                if old.key == key { return }
                old.users.remove(record)
                if old.users.isEmpty { tables.handlers.removeValue(forKey: old.key) }
            }
            let handler: Handler
            if let existing = tables.handlers[key] {
                handler = existing
            } else {
                handler = Handler(key: key)
                tables.handlers[key] = handler
            }
            handler.users.append(record)
            record.place = handler
        }
        cell.managedObjectReady(object, origin: .memory, request: request)
    }
}

/// A design whose memory-cache entries are the handlers, at its floor: under one lock, the
/// entry by key (marked recently used: one store, as a CLOCK eviction keeps recency) and the
/// user's record by identifier; the record moves from its old entry's list to the new one's.
final class MergedTableFloor: Sendable {
    final class Entry {
        let object: any Sendable
        var recentlyUsed = false
        var users = ManageHitFloors.Users<Entry>()

        init(object: any Sendable) {
            self.object = object
        }
    }

    struct Tables {
        var entries: [ObjectKey: Entry]
        var records: [ObjectIdentifier: ManageHitFloors.Record<Entry>] = [:]
        /// The records by the cells' slots, for `recordInUser`.
        var recordsBySlot: [ManageHitFloors.Record<Entry>?] = []
    }

    private let tables: BaselineLock<Tables>

    /// A floor holding `objects` under `keys`.
    init(keys: [ObjectKey], objects: [Payload]) {
        let entries = zip(keys, objects).map { ($0, Entry(object: $1)) }
        tables = BaselineLock(Tables(entries: Dictionary(uniqueKeysWithValues: entries)))
    }

    /// Lists `cell` on the entry of the row it shows and gives it the object. `recordInUser`: the
    /// cell's record is found by its slot (as if the user held it) rather than in a table of users.
    func manage(_ cell: ReusableCell, variant: String, recordInUser: Bool = false) {
        guard let request = cell.objectRequest else { return }
        let key = request.objectKey(variant: variant)
        let userID = ObjectIdentifier(cell)
        let object = tables.withLock { tables -> Payload? in
            guard let entry = tables.entries[key] else { return nil }
            entry.recentlyUsed = true
            let record: ManageHitFloors.Record<Entry>
            if recordInUser {
                if tables.recordsBySlot.count <= cell.slot { tables.recordsBySlot += Array(repeating: nil, count: cell.slot + 1) }
                if let existing = tables.recordsBySlot[cell.slot] {
                    record = existing
                } else {
                    record = ManageHitFloors.Record(user: cell)
                    tables.recordsBySlot[cell.slot] = record
                }
            } else if let existing = tables.records[userID] {
                record = existing
            } else {
                record = ManageHitFloors.Record(user: cell)
                tables.records[userID] = record
            }
            if record.place !== entry {
                record.place?.users.remove(record)
                entry.users.append(record)
                record.place = entry
            }
            return entry.object as? Payload
        }
        if let object { cell.managedObjectReady(object, origin: .memory, request: request) }
    }
}

/// The least any `manage` of these cells costs: the cell's request and its key, one lookup in a
/// `Dictionary` behind a `Mutex` (the baseline's), and the cell's callback. Nothing is attached.
final class LookupOnlyFloor: Sendable {
    private let objects: LockedDictionary<ObjectKey, Payload>

    /// A floor holding `objects` under `keys`.
    init(keys: [ObjectKey], objects: [Payload]) {
        self.objects = LockedDictionary(Dictionary(uniqueKeysWithValues: zip(keys, objects)))
    }

    /// Gives `cell` the object of the row it shows.
    func manage(_ cell: ReusableCell, variant: String) {
        guard let request = cell.objectRequest else { return }
        if let object = objects.value(forKey: request.objectKey(variant: variant)) {
            cell.managedObjectReady(object, origin: .memory, request: request)
        }
    }
}

/// `MergedTableFloor` written without references on the hit path: entries and users' records
/// are values in arrays, found by index (the key's entry through one `Dictionary` lookup, the
/// user's record by the slot the user carries), and an entry lists its users as a linked list of
/// record indices. Moving a cell to another row rewrites a few integers: no allocation and no
/// reference counting beyond the object handed to the cell. Each record's weak reference to its
/// user is made once, when the record is, and never touched by a hit.
final class CompactTableFloor: Sendable {
    struct Entry {
        /// The first of the entry's users (a record index), or -1.
        var firstUser: Int32 = -1
        var recentlyUsed = false
    }

    struct Record {
        /// The entry the user is listed on, and its neighbours in that entry's list; -1: none.
        var entry: Int32 = -1
        var previous: Int32 = -1
        var next: Int32 = -1
    }

    /// The user of a record, held weakly; made once per record.
    final class WeakUser {
        weak var user: ReusableCell?

        init(_ user: ReusableCell) {
            self.user = user
        }
    }

    struct Tables {
        var entryIndex: [ObjectKey: Int32]
        var entries: [Entry]
        var objects: [Payload]
        var records: [Record] = []
        var users: [WeakUser] = []
    }

    private let tables: BaselineLock<Tables>

    /// A floor holding `objects` under `keys`.
    init(keys: [ObjectKey], objects: [Payload]) {
        let index = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, Int32($0)) })
        tables = BaselineLock(
            Tables(entryIndex: index, entries: Array(repeating: Entry(), count: keys.count), objects: objects))
    }

    /// Lists `cell` on the entry of the row it shows and gives it the object.
    func manage(_ cell: ReusableCell, variant: String) {
        guard let request = cell.objectRequest else { return }
        let key = request.objectKey(variant: variant)
        let object = tables.withLock { tables -> Payload? in
            guard let entry = tables.entryIndex[key] else { return nil }
            tables.entries[Int(entry)].recentlyUsed = true
            let record = Int32(cell.slot)
            while tables.records.count <= cell.slot {
                tables.records.append(Record())
                tables.users.append(WeakUser(cell))
            }
            if tables.records[Int(record)].entry != entry {
                Self.unlink(record, in: &tables)
                Self.link(record, to: entry, in: &tables)
            }
            return tables.objects[Int(entry)]
        }
        if let object { cell.managedObjectReady(object, origin: .memory, request: request) }
    }

    private static func unlink(_ record: Int32, in tables: inout Tables) {
        let old = tables.records[Int(record)]
        guard old.entry >= 0 else { return }
        if old.previous >= 0 {
            tables.records[Int(old.previous)].next = old.next
        } else {
            tables.entries[Int(old.entry)].firstUser = old.next
        }
        if old.next >= 0 { tables.records[Int(old.next)].previous = old.previous }
    }

    private static func link(_ record: Int32, to entry: Int32, in tables: inout Tables) {
        let first = tables.entries[Int(entry)].firstUser
        tables.records[Int(record)] = Record(entry: entry, previous: -1, next: first)
        if first >= 0 { tables.records[Int(first)].previous = record }
        tables.entries[Int(entry)].firstUser = record
    }
}
