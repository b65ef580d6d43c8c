import ManagedCache

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
