import Foundation
import Testing
import TestSupport

/// Issue 19, item 3: when descriptors run out anyway (the app uses them too), nothing crashes
/// and nothing is corrupted. A child process (`DescriptorExhaustionChild`) lowers its limit to
/// 128 and takes every descriptor left, then: a load whose file cache cannot open a file is
/// served from memory, uncached, with a `fileCacheFailure` event naming the key, `create` and
/// `EMFILE`; a load that needs a new connection fails with `.transport`; once descriptors are
/// back, loads work, are cached, and every entry reads back intact with nothing left in
/// `loading/`. For both cache types.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct DescriptorExhaustionTests {
    static let steps = ["warm", "exhaust", "memory", "uncached", "event", "connection", "recover-third", "recover-second",
                        "entry", "loading"]

    @Test(arguments: ["single", "big"]) func runningOutOfDescriptorsCrashesNothingAndDamagesNothing(kind: String) throws {
        let directory = TemporaryDirectory(prefix: "descriptor-exhaustion")
        let process = Process()
        process.executableURL = try Self.childExecutable()
        process.arguments = [directory.url.path, kind]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let ended = waitUntilBlocking { !process.isRunning }
        if !ended { process.terminate() }
        process.waitUntilExit()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(ended, "the child hung: \(lines)")
        #expect(process.terminationReason == .exit, "the child crashed (signal \(process.terminationStatus)): \(lines)")
        #expect(process.terminationStatus == 0, "\(lines.filter { $0.contains(" FAIL ") })")
        for step in Self.steps {
            #expect(lines.contains { $0.hasPrefix(step + " ok") }, "step \(step): \(lines.filter { $0.hasPrefix(step) })")
        }
        print("reliability: descriptor exhaustion (\(kind)): " + lines.joined(separator: "; "))
    }

    /// The child, built by SwiftPM beside the test bundle (or in the package's `.build`).
    static func childExecutable() throws -> URL {
        let name = "DescriptorExhaustionChild"
        var directories: [URL] = []
        var current = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            directories.append(current)
            current = current.deletingLastPathComponent()
        }
        let build = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build")
        for configuration in ["debug", "release"] {
            directories.append(build.appendingPathComponent(configuration))
        }
        for directory in directories {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw ChildNotFound(searched: directories.map(\.path))
    }

    struct ChildNotFound: Error, CustomStringConvertible {
        var searched: [String]
        var description: String { "DescriptorExhaustionChild not found; looked in: \(searched.joined(separator: ", "))" }
    }
}
