import Foundation

/// A table view scrolled at constant speed, then stopped, in real time at 60 frames per second.
///
/// Each frame, the rows that come on screen are shown, each in the reusable cell `row % visibleRows`
/// (the cell that just left at the top). Rows scrolled past are never shown again.
struct ScrollSimulation: Sendable {
    /// Rows in the table.
    let rowCount: Int
    /// Rows on screen at once (and reusable cells).
    let visibleRows: Int
    /// Scrolling speed.
    let rowsPerSecond: Double
    /// How long the scroll lasts before it stops.
    let duration: Double
    /// Seconds between frames.
    let frameInterval = 1.0 / 60

    /// The first row on screen once stopped.
    var restingTop: Int { min(Int(rowsPerSecond * duration), rowCount - visibleRows) }

    /// The rows on screen once stopped: the rows at rest.
    var restingRows: Range<Int> { restingTop..<(restingTop + visibleRows) }

    /// Every row shown during the scroll, the rows at rest included.
    var shownRowCount: Int { restingRows.upperBound }

    /// Runs the scroll on this thread, calling `show` for each row as it comes on screen, and
    /// returns when the scroll stops (with the rows at rest shown).
    func run(show: (Int) -> Void) {
        let start = Stopwatch.now()
        var nextRow = 0
        var frame = 0
        while true {
            let time = min(Double(frame) * frameInterval, duration)
            let top = min(Int(rowsPerSecond * time), rowCount - visibleRows)
            while nextRow < top + visibleRows {
                show(nextRow)
                nextRow += 1
            }
            if time >= duration { return }
            frame += 1
            let due = Double(frame) * frameInterval - Stopwatch.seconds(since: start)
            if due > 0 { Thread.sleep(forTimeInterval: due) }
        }
    }
}
