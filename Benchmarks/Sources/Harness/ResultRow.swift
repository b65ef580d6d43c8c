/// One line of the results table: a scenario, our figure, the baseline's, their ratio, the target
/// and whether it holds. Every ratio is our figure divided by the baseline's, both measured in
/// the same run: the median of the repetitions' ratios (each repetition measures both sides back
/// to back, so a burst of load from other processes hits both).
struct ResultRow: Sendable {
    /// What was measured.
    var scenario: String
    /// Our figure (median and range of the repetitions).
    var ours: String
    /// The baseline's figure, or `—` when the target is absolute.
    var baseline: String
    /// Our figure divided by the baseline's, or `—`.
    var ratio: String
    /// What the ratio (or our figure) must satisfy.
    var target: String
    /// Whether the target holds; `nil` for informational rows.
    var met: Bool?
    /// Lines printed under the table: counts, checks, what the figures mean.
    var notes: [String] = []

    /// A row comparing two medians: `ours / baseline` must be at most `limit` (times, costs) or at
    /// least `limit` (throughputs), as `direction` says.
    static func comparing(
        _ scenario: String, ours: Samples, baseline: Samples, baselineName: String,
        write: (Double) -> String, direction: TargetDirection, limit: Double, target: String, notes: [String] = []
    ) -> ResultRow {
        let ratio = ours.pairedRatio(to: baseline)
        let met = direction == .atMost ? ratio <= limit : ratio >= limit
        return ResultRow(
            scenario: scenario, ours: Format.median(ours, write),
            baseline: "\(baselineName): \(Format.median(baseline, write))",
            ratio: Format.ratio(ratio), target: target, met: met, notes: notes)
    }
}

extension ResultRow {
    /// An informational row (no target): two medians and their paired ratio.
    static func diagnostic(
        _ scenario: String, ours: Samples, baseline: Samples, baselineName: String,
        write: (Double) -> String, notes: [String] = []
    ) -> ResultRow {
        ResultRow(
            scenario: scenario, ours: Format.median(ours, write),
            baseline: "\(baselineName): \(Format.median(baseline, write))",
            ratio: Format.ratio(ours.pairedRatio(to: baseline)), target: "—", met: nil, notes: notes)
    }
}
