/// When one entry expires, as queued in `CacheIndex`'s expiry heap. Stale items (the entry was
/// removed, replaced or given new metadata) are recognised by their version and expiry and skipped.
struct ExpiryItem: Comparable, Sendable {
    var expires: Double
    var slot: Int32
    var version: UInt64

    static func < (lhs: ExpiryItem, rhs: ExpiryItem) -> Bool { lhs.expires < rhs.expires }
    static func == (lhs: ExpiryItem, rhs: ExpiryItem) -> Bool {
        lhs.expires == rhs.expires && lhs.slot == rhs.slot && lhs.version == rhs.version
    }
}
