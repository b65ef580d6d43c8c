import Foundation

/// Wall-clock timing on the monotonic clock.
enum Stopwatch {
    /// Nanoseconds since an arbitrary fixed point (monotonic).
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// Seconds elapsed since `start` (a value of `now()`).
    static func seconds(since start: UInt64) -> Double {
        Double(now() &- start) / 1e9
    }

    /// Runs `body` and returns how many seconds it took.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return seconds(since: start)
    }

    /// Runs `body` and returns how many seconds it took.
    static func secondsAsync(_ body: () async throws -> Void) async rethrows -> Double {
        let start = now()
        try await body()
        return seconds(since: start)
    }
}
