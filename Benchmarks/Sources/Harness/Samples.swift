/// The values one figure was measured as, one per repetition, with the statistics the table reports.
struct Samples: Sendable {
    /// The measured values, in the order they were taken.
    private(set) var values: [Double] = []

    /// Adds one repetition's value.
    mutating func append(_ value: Double) {
        values.append(value)
    }

    /// The middle value (the mean of the two middle ones for an even count); 0 when empty.
    var median: Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The smallest value; 0 when empty.
    var minimum: Double { values.min() ?? 0 }

    /// The largest value; 0 when empty.
    var maximum: Double { values.max() ?? 0 }

    /// How many repetitions were measured.
    var count: Int { values.count }

    /// The median of `self[i] / other[i]` over the repetitions both have: the ratio of two sides
    /// measured back to back, robust to load that changes between repetitions.
    func pairedRatio(to other: Samples) -> Double {
        var ratios = Samples()
        for (mine, theirs) in zip(values, other.values) { ratios.append(theirs > 0 ? mine / theirs : .infinity) }
        return ratios.median
    }
}
