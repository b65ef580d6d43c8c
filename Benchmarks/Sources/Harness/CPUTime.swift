import Foundation

/// CPU time this process used (user + system, every thread): tells a CPU-bound side from one
/// that waits, and is less disturbed than wall time by other processes on a shared machine.
enum CPUTime {
    /// Seconds of CPU time used since the process started.
    static func now() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return user + system
    }
}
