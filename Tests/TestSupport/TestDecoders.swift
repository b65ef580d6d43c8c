import Foundation
import ManagedCache
import ManagedCacheLocking

/// Counts how often something happened, from any thread.
public final class Counter: Sendable {
    private let value = Lock(0)
    public init() {}
    public func increment() { value.withLock { $0 += 1 } }
    public var count: Int { value.withLock { $0 } }
}

/// A decoded object with reference identity, so tests can check that users share one instance.
public final class Blob: Sendable {
    public let bytes: Data
    public init(_ bytes: Data) { self.bytes = bytes }
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// Decodes bytes into a `Blob`, counting decodes; rejects bodies starting with "BAD".
public struct BlobDecoder: ObjectDecoding {
    public let decodes: Counter
    public let name: String

    public init(decodes: Counter = Counter(), name: String = "blob") {
        self.decodes = decodes
        self.name = name
    }

    public var identifier: String { "test.blob.\(name)" }

    public func decode(_ data: LoadedData) throws -> Blob {
        decodes.increment()
        let bytes = try data.bytes()
        if bytes.starts(with: Data("BAD".utf8)) { throw DecodeRefusal() }
        return Blob(bytes)
    }

    struct DecodeRefusal: Error {}
}
