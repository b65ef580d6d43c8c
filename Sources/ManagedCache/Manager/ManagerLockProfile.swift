#if MANAGEDCACHE_LOCK_PROFILE
import Foundation
import ManagedCacheLocking

/// How long every manager's lock was held, and waited for, by the code that took it: the answer a
/// diagnostic build gives to "what holds the lock `manage` needs, and for how long".
///
/// Only in builds made with `-Xswiftc -DMANAGEDCACHE_LOCK_PROFILE`; other builds have neither this
/// type nor its cost. The `manage-latency` benchmark prints the report after its table when built
/// so:
///
///     swift build -c release --product ManagedCacheBenchmarks -Xswiftc -DMANAGEDCACHE_LOCK_PROFILE
///     .build/release/ManagedCacheBenchmarks manage-latency
///
/// Holds over 50 µs are counted apart: on a busy machine they are almost always a holder that was
/// preempted, and they would swamp the mean of what the code itself costs.
package enum ManagerLockProfile {
    /// Where the lock was taken.
    struct Site: Hashable {
        let file: String
        let line: Int
    }

    /// What one site's acquisitions cost.
    struct Tally {
        var acquisitions = 0
        var waited: UInt64 = 0
        var held: UInt64 = 0
        var longestHold: UInt64 = 0
        /// Holds over `longHold`, and the total of the others.
        var longHolds = 0
        var shortHeld: UInt64 = 0
    }

    static let longHold: UInt64 = 50_000
    private static let tallies = Lock<[Site: Tally]>([:])

    /// Counts one acquisition at `file:line`: nanoseconds waited for the lock and held.
    static func record(file: String, line: Int, waited: UInt64, held: UInt64) {
        tallies.withLock { tallies in
            var tally = tallies[Site(file: file, line: line), default: Tally()]
            tally.acquisitions += 1
            tally.waited += waited
            tally.held += held
            tally.longestHold = max(tally.longestHold, held)
            if held > longHold { tally.longHolds += 1 } else { tally.shortHeld += held }
            tallies[Site(file: file, line: line)] = tally
        }
    }

    /// Forgets everything counted so far.
    package static func reset() {
        tallies.withLock { $0.removeAll() }
    }

    /// A Markdown table of the sites that took the lock, longest total hold first.
    package static func report() -> String {
        let rows = tallies.withLock { $0 }.sorted { $0.value.held > $1.value.held }
        var lines = [
            "| taken at | acquisitions | mean hold ≤ 50 µs | holds > 50 µs | longest hold | total held | total waited |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for (site, tally) in rows {
            let short = tally.acquisitions - tally.longHolds
            let mean = short > 0 ? Double(tally.shortHeld) / Double(short) / 1_000 : 0
            lines.append(
                "| \(site.file):\(site.line) | \(tally.acquisitions) | \(String(format: "%.2f µs", mean)) | \(tally.longHolds) | "
                    + "\(String(format: "%.0f µs", Double(tally.longestHold) / 1_000)) | "
                    + "\(String(format: "%.1f ms", Double(tally.held) / 1e6)) | \(String(format: "%.1f ms", Double(tally.waited) / 1e6)) |")
        }
        return lines.joined(separator: "\n")
    }
}
#endif
