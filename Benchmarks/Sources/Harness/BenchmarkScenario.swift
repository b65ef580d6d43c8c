/// One scenario of the benchmark: measures our figure and its baseline in the same run and
/// returns the table rows.
protocol BenchmarkScenario {
    /// A short lowercase name the command-line filter matches against (`memory-cache`, `scroll`).
    var identifier: String { get }
    /// Whether it talks to a loopback server (the run then measures the server's ceiling first).
    var usesNetwork: Bool { get }
    /// Runs the scenario on the calling thread (blocking it; never a Swift concurrency thread).
    func run(in context: BenchmarkContext) throws -> [ResultRow]
}
