import Foundation

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
