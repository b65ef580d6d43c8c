import ChildProcesses
import Foundation

/// The machine a run happened on: cores, kernel and Swift version, printed above the table.
struct MachineDescription {
    /// Active processor count (`nproc`).
    let cores: Int
    /// `uname -a`.
    let kernel: String
    /// The first line of `swift --version`, or the compiler version the binary was built with.
    let swift: String

    /// The machine this process runs on.
    static var current: MachineDescription {
        MachineDescription(
            cores: ProcessInfo.processInfo.activeProcessorCount,
            kernel: command("/bin/sh", ["-c", "uname -a"]) ?? ProcessInfo.processInfo.operatingSystemVersionString,
            swift: command("/bin/sh", ["-c", "swift --version 2>/dev/null | head -1"]) ?? compilerVersion)
    }

    /// Three lines: cores, kernel, Swift.
    func rendered() -> String {
        "cores: \(cores)\nkernel: \(kernel)\nswift: \(swift)"
    }

    private static var compilerVersion: String {
        #if compiler(>=6.3)
        return "compiled with Swift 6.3 or later"
        #else
        return "compiled with Swift 6.0–6.2"
        #endif
    }

    /// Runs `path` and returns its trimmed standard output. Started with `posix_spawn`
    /// (`SpawnedProcess`), not Foundation's `Process`, whose `run()` can crash on Linux.
    private static func command(_ path: String, _ arguments: [String]) -> String? {
        guard
            let process = try? SpawnedProcess(
                executable: URL(fileURLWithPath: path), arguments: arguments, standardOutput: .pipe, standardError: .discard)
        else { return nil }
        let output = process.readOutputToEnd()
        process.waitUntilExit()
        let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
