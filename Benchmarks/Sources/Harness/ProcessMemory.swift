import Foundation

/// The process's resident memory, read from `/proc/self/status` (Linux).
enum ProcessMemory {
    /// Resident memory now (`VmRSS`), in bytes.
    static var residentBytes: Int? { field("VmRSS") }

    /// The most resident memory so far (`VmHWM`, the high-water mark), in bytes.
    static var peakResidentBytes: Int? { field("VmHWM") }

    /// Restarts the high-water mark from the current resident memory (`5` into
    /// `/proc/self/clear_refs`). Returns whether the kernel accepted it.
    @discardableResult
    static func resetPeak() -> Bool {
        #if os(Linux)
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
        #else
        return false  // no /proc: the benchmark reports no peak
        #endif
    }

    /// A `kB` field of `/proc/self/status`, in bytes.
    private static func field(_ name: String) -> Int? {
        #if os(Linux)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let number = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
            return number.flatMap { Int($0) }.map { $0 * 1_024 }
        }
        return nil
        #else
        return nil  // no /proc: the benchmark reports no resident memory
        #endif
    }
}
