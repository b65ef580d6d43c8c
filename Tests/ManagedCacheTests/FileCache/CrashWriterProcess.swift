import CrashPayload
import Foundation
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `read` and `kill` are also method names below.
#if canImport(Glibc)
private let systemRead = Glibc.read
private let systemKill = Glibc.kill
#elseif canImport(Darwin)
private let systemRead = Darwin.read
private let systemKill = Darwin.kill
#endif

extension CrashPayload {
    /// The generation an entry was written with (from its metadata).
    static func generation(of entry: FileCacheEntry) -> UInt64? {
        entry.metadata.userInfo["generation"].flatMap { UInt64($0) }
    }
}

/// A running FileCacheCrashWriter child.
final class CrashWriterProcess {
    struct NotFound: Error, CustomStringConvertible {
        var searched: [String]
        var description: String { "FileCacheCrashWriter not found; looked in: \(searched.joined(separator: ", "))" }
    }

    /// The child executable, built by SwiftPM beside the test bundle. Looks next to the running
    /// test binary and its ancestors (Linux: .build/<triple>/debug/X.xctest; macOS:
    /// X.xctest/Contents/MacOS/X), then in the package's .build directories.
    static func executable() throws -> URL {
        let name = "FileCacheCrashWriter"
        var directories: [URL] = []
        var current = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            directories.append(current)
            current = current.deletingLastPathComponent()
        }
        directories.append(Bundle.main.bundleURL)
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let build = package.appendingPathComponent(".build")
        for configuration in ["debug", "release"] {
            directories.append(build.appendingPathComponent(configuration))
            for triple in (try? FileManager.default.contentsOfDirectory(atPath: build.path)) ?? [] {
                directories.append(build.appendingPathComponent(triple).appendingPathComponent(configuration))
            }
        }
        for directory in directories {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw NotFound(searched: directories.map(\.path))
    }

    private let process = Process()
    private let output = Pipe()
    private var buffer = Data()
    /// Commits the child reported: key and generation.
    private(set) var commits: [(key: String, generation: UInt64)] = []
    private(set) var opened = false
    /// The child's closing summary in `share` mode: reads that matched, stale and wrong.
    private(set) var readSummary: (good: Int, stale: Int, wrong: Int)?

    init(arguments: [String]) throws {
        process.executableURL = try Self.executable()
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
    }

    var processIdentifier: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Reads the child's reports until `done` holds, the child exits, or `timeout` passes.
    /// Returns whether `done` held.
    @discardableResult
    func read(timeout: TimeInterval = 60, until done: (CrashWriterProcess) -> Bool) -> Bool {
        let deadline = Date() + timeout
        let descriptor = output.fileHandleForReading.fileDescriptor
        while !done(self) {
            guard Date() < deadline else { return false }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            if !readAvailableChunk() { return done(self) }  // end of output: the child exited
        }
        return true
    }

    /// Reads whatever the child has written so far, without waiting: a parent busy with its own
    /// work calls it now and then so the child never blocks on a full pipe.
    func drainAvailableOutput() {
        let descriptor = output.fileHandleForReading.fileDescriptor
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0, readAvailableChunk() else { return }
        }
    }

    /// Reads one chunk of output and handles its complete lines; false at end of output.
    private func readAvailableChunk() -> Bool {
        let descriptor = output.fileHandleForReading.fileDescriptor
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, 4096) }
        if count <= 0 { return false }
        buffer.append(contentsOf: chunk[0..<count])
        while let newline = buffer.firstIndex(of: 0x0A) {
            let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex...newline)
            handle(line)
        }
        return true
    }

    private func handle(_ line: String) {
        let fields = line.split(separator: " ")
        if fields.first == "O" { opened = true }
        if fields.count == 4, fields[0] == "S", let good = Int(fields[1]), let stale = Int(fields[2]), let wrong = Int(fields[3]) {
            readSummary = (good, stale, wrong)
        }
        guard fields.count == 4, fields[0] == "C", let generation = UInt64(fields[2]), let crc = UInt32(fields[3]) else { return }
        let key = String(fields[1])
        // The child's bytes must be the ones computed here, or the checks below mean nothing.
        #expect(CRC32.checksum(CrashPayload.bytes(key: key, generation: generation)) == crc)
        commits.append((key, generation))
    }

    /// Kills the child with SIGKILL and waits for it. Returns whether the signal is what ended it
    /// (false: the child had already exited, which it only does on an error).
    func kill() -> Bool {
        _ = systemKill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    /// Waits (bounded) for the child to exit by itself; returns its exit status, or nil on timeout.
    func waitForExit(timeout: TimeInterval = 60) -> Int32? {
        read(timeout: timeout) { _ in false }
        let deadline = Date() + 5
        while process.isRunning && Date() < deadline { usleep(2_000) }
        guard !process.isRunning else {
            _ = self.kill()
            return nil
        }
        return process.terminationReason == .exit ? process.terminationStatus : -1
    }
}
