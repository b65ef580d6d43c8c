import Foundation
import ManagedCache
import Synchronization

/// The decoded object of the benchmarks: a class, so sharing one instance among users is visible
/// (`===`), holding the downloaded bytes.
final class Payload: Sendable {
    /// The bytes it was decoded from.
    let bytes: Data

    /// Wraps `bytes`.
    init(_ bytes: Data) {
        self.bytes = bytes
    }
}

/// Counts decodes from any thread.
final class DecodeCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// A counter at zero.
    init() {}

    /// Adds one decode.
    func increment() {
        value.add(1, ordering: .relaxed)
    }

    /// The decodes so far.
    var count: Int { value.load(ordering: .relaxed) }
}

/// Decodes bytes into a `Payload` (keeping them as they are) and counts how often it ran. Its
/// identifier is a fixed string, as a decoder with parameters (a thumbnail size) would have.
struct PayloadDecoder: ObjectDecoding {
    /// Shared by every copy of this decoder.
    let counter: DecodeCounter

    /// Creates a decoder counting into `counter`.
    init(counter: DecodeCounter = DecodeCounter()) {
        self.counter = counter
    }

    var identifier: String { "benchmarks.payload" }

    func decode(_ data: LoadedData) throws -> Payload {
        counter.increment()
        return Payload(try data.bytes())
    }
}
