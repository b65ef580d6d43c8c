/// What one scroll run measured, for one loader.
struct ScrollOutcome: Sendable {
    /// Seconds from the scroll's stop until every row at rest showed its own object.
    var secondsUntilShown: Double
    /// Whether every row at rest was shown before the deadline.
    var allShown: Bool
    /// Body bytes the server sent for rows that were never at rest (all it sent, minus one
    /// object for each row at rest).
    var bytesForRowsNeverAtRest: Int
    /// Requests the server received, and how many of them were for rows never at rest.
    var requests: Int
    var requestsForRowsNeverAtRest: Int
    /// Body bytes the client reports having received (manager statistics, or completed naive downloads).
    var clientBytes: Int
    /// Loads the manager cancelled because the loading buffer pushed them out (0 for the naive loader).
    var cancelledByBuffer: Int
    /// Cells at rest that, once everything settled, showed another row's object (or none).
    var cellsShowingWrongRow: Int
}
