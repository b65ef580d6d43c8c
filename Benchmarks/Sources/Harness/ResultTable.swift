/// Prints the results as one Markdown table (pasted as is into BENCHMARKS.md), then the notes.
struct ResultTable {
    private(set) var rows: [ResultRow] = []

    /// Adds rows in the order they were measured.
    mutating func append(contentsOf newRows: [ResultRow]) {
        rows += newRows
    }

    /// The table and the notes, as Markdown.
    func rendered() -> String {
        var lines = [
            "| scenario | ours | baseline (same run) | ratio | target | met |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for row in rows {
            let met = row.met.map { $0 ? "yes" : "**no**" } ?? "—"
            let cells = [row.scenario, row.ours, row.baseline, row.ratio, row.target, met]
            lines.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        let notes = rows.flatMap { row in row.notes.map { "- \(row.scenario): \($0)" } }
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }
        return lines.joined(separator: "\n")
    }
}
