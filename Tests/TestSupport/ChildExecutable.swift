import ChildProcesses
import Foundation
import ManagedCacheLocking

/// A child executable of the package (`DescriptorExhaustionChild`, `StreamingMemoryChild`,
/// `BusyPoolChild`), built by SwiftPM beside the test bundle (or in the package's `.build`).
public func childExecutable(named name: String) throws -> URL {
    var directories: [URL] = []
    var current = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<5 {
        directories.append(current)
        current = current.deletingLastPathComponent()
    }
    let build = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build")
    for configuration in ["debug", "release"] {
        directories.append(build.appendingPathComponent(configuration))
    }
    for directory in directories {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw ChildExecutableNotFound(name: name, searched: directories.map(\.path))
}

/// `childExecutable(named:)` found nothing.
public struct ChildExecutableNotFound: Error, CustomStringConvertible {
    /// The executable's name.
    public var name: String
    /// Where it was looked for.
    public var searched: [String]
    public var description: String { "\(name) not found; looked in: \(searched.joined(separator: ", "))" }
}

/// How a child program ended and what it printed (see `runChild(named:arguments:environment:timeout:)`).
public struct ChildRun {
    /// Whether it ended within the time allowed (it was terminated otherwise).
    public var ended: Bool
    /// How it ended.
    public var terminationReason: Process.TerminationReason
    /// Its exit status, or the signal that ended it.
    public var terminationStatus: Int32
    /// Its standard output, line by line.
    public var lines: [String]

    /// Whether it exited by itself with status 0.
    public var succeeded: Bool { ended && terminationReason == .exit && terminationStatus == 0 }

    /// What follows `name` and a space on the first line that starts with them.
    public func value(_ name: String) -> String? {
        lines.first { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
    }
}

/// Runs the package's child program `name`, waits at most `timeout` seconds (terminating it past
/// that) and collects its standard output.
///
/// - Parameters:
///   - name: The executable target's name.
///   - arguments: Its command-line arguments.
///   - environment: Its environment; default the test process's.
///   - timeout: How long it may run; default `waitBound`.
public func runChild(
    named name: String, arguments: [String], environment: [String: String]? = nil, timeout: Double = waitBound
) throws -> ChildRun {
    let process = try SpawnedProcess(
        executable: try childExecutable(named: name), arguments: arguments, environment: environment, standardOutput: .pipe)
    // Read while it runs, so that a child writing more than a pipe holds never blocks.
    let output = Lock(Data())
    let outputRead = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        let data = process.readOutputToEnd()
        output.withLock { $0 = data }
        outputRead.signal()
    }
    let ended = waitUntilBlocking(timeout: timeout) { !process.isRunning }
    if !ended { process.send(SIGKILL) }
    process.waitUntilExit()
    _ = outputRead.wait(timeout: .now() + 10)
    let lines = String(decoding: output.withLock { $0 }, as: UTF8.self).split(separator: "\n").map(String.init)
    return ChildRun(
        ended: ended, terminationReason: process.terminationReason, terminationStatus: process.terminationStatus, lines: lines)
}
