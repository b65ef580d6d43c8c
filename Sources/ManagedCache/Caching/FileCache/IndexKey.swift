import Foundation

/// A cache key compared and hashed by its UTF-8 bytes.
///
/// Swift's `String` equality treats canonically equivalent strings (a precomposed "é" and "e"
/// followed by a combining accent) as equal. Cache keys are URLs and oids whose bytes are what
/// a server sees, so two such keys are two entries: comparing bytes keeps them apart.
struct IndexKey: Hashable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: IndexKey, rhs: IndexKey) -> Bool {
        let fast = lhs.string.utf8.withContiguousStorageIfAvailable { left in
            rhs.string.utf8.withContiguousStorageIfAvailable { right in
                left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
        if let fast, let result = fast { return result }
        return lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        // Both paths feed the same bytes in one `combine(bytes:)`, so equal keys hash equally
        // whether or not their storage is contiguous.
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil {
            Array(string.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
}
