import ChildProcesses
import Foundation

/// What a child run of this benchmark program printed, and how it exited.
struct ChildRun {
    /// Its exit status (or the signal that ended it).
    let status: Int32
    /// Its standard output.
    let output: String

    /// Runs this benchmark program again as a child with `arguments` (a scenario's child mode), waits
    /// for it and collects its standard output. Started with `posix_spawn` (`SpawnedProcess`), not
    /// Foundation's `Process`, whose `run()` can crash the caller on Linux with Swift 6.3.1.
    ///
    /// - Parameters:
    ///   - arguments: The child's arguments.
    ///   - environment: Its environment; default this process's.
    static func ofThisProgram(arguments: [String], environment: [String: String]? = nil) throws -> ChildRun {
        #if os(Linux)
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        #else
        let executable = CommandLine.arguments[0]
        #endif
        let process = try SpawnedProcess(
            executable: URL(fileURLWithPath: executable), arguments: arguments, environment: environment, standardOutput: .pipe)
        let data = process.readOutputToEnd()
        process.waitUntilExit()
        return ChildRun(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
