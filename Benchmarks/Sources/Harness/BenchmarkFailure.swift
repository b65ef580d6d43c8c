/// A scenario could not measure what it should (a wrong count, a failed load): the run reports
/// it in the table instead of a figure.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String

    /// A failure explained by `description`.
    init(_ description: String) {
        self.description = description
    }
}
