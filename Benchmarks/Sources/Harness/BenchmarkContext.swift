/// What every scenario is given: the options and the sizes of the run.
struct BenchmarkContext: Sendable {
    /// The command-line options.
    let options: BenchmarkOptions

    /// Whether this is a `--quick` run.
    var quick: Bool { options.quick }

    /// `full` in a normal run, `quick` in a `--quick` one.
    func pick<T>(full: T, quick: T) -> T {
        options.quick ? quick : full
    }

    /// The repetitions of a paired measurement: `full` (or `quick`) measured rounds after one warm-up.
    func measurement(full: Int, quick: Int) -> PairedMeasurement {
        PairedMeasurement(warmUps: 1, repetitions: pick(full: full, quick: quick))
    }
}
