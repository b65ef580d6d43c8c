/// Measures our figure and its baselines in the same run: warm-up rounds first (discarded), then
/// repetitions that rotate which side goes first, so drift on a shared, noisy machine hits every
/// side alike. Each closure returns one repetition's figure and records
/// its own failures (seconds, ns per operation, objects
/// per second: whatever the scenario reports).
struct PairedMeasurement {
    /// Rounds run and thrown away before measuring.
    var warmUps: Int
    /// Measured rounds.
    var repetitions: Int

    /// Runs the rounds over every side; returns one `Samples` per side, in the order given.
    func run(_ sides: [() -> Double]) -> [Samples] {
        for _ in 0..<warmUps {
            for side in sides { _ = side() }
        }
        var samples = [Samples](repeating: Samples(), count: sides.count)
        for repetition in 0..<repetitions {
            for offset in 0..<sides.count {
                let index = (repetition + offset) % sides.count
                samples[index].append(sides[index]())
            }
        }
        return samples
    }

    /// Runs the rounds for our side and one baseline.
    func run(ours: () -> Double, baseline: () -> Double) -> (ours: Samples, baseline: Samples) {
        withoutActuallyEscaping(ours) { ours in
            withoutActuallyEscaping(baseline) { baseline in
                let samples = run([ours, baseline])
                return (samples[0], samples[1])
            }
        }
    }
}
