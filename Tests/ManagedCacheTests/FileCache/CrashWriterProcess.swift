import ChildProcesses
import CrashPayload
import Foundation
import TestSupport
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

    private let process: SpawnedProcess
    private var buffer = Data()
    /// Commits the child reported: key and generation.
    private(set) var commits: [(key: String, generation: UInt64)] = []
    private(set) var opened = false
    /// The child (`stop` mode) waits for the parent's go.
    private(set) var ready = false
    /// The child's closing summary in `share` mode: reads that matched, stale and wrong.
    private(set) var readSummary: (good: Int, stale: Int, wrong: Int)?
    /// What the child reported about pins (`crash` mode), in order: apply them to a `PinLedger`.
    private(set) var pinReports: [PinLedger.Report] = []

    init(arguments: [String]) throws {
        process = try SpawnedProcess(executable: try Self.executable(), arguments: arguments, standardOutput: .pipe)
    }

    /// The reading end of the child's standard output.
    private var outputDescriptor: Int32 { process.outputDescriptor ?? -1 }

    var processIdentifier: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Reads the child's reports until `done` holds, the child exits, or `timeout` passes.
    /// Returns whether `done` held.
    @discardableResult
    func read(timeout: TimeInterval = 60, until done: (CrashWriterProcess) -> Bool) -> Bool {
        let deadline = Date() + timeout
        let descriptor = outputDescriptor
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
        let descriptor = outputDescriptor
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0, readAvailableChunk() else { return }
        }
    }

    /// Reads one chunk of output and handles its complete lines; false at end of output.
    private func readAvailableChunk() -> Bool {
        let descriptor = outputDescriptor
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
        if fields.first == "R" { ready = true }
        if let report = PinLedger.Report(fields) { pinReports.append(report) }
        if fields.count == 4, fields[0] == "S", let good = Int(fields[1]), let stale = Int(fields[2]), let wrong = Int(fields[3]) {
            readSummary = (good, stale, wrong)
        }
        guard fields.count == 4 || fields.count == 5, fields[0] == "C", let generation = UInt64(fields[2]), let crc = UInt32(fields[3])
        else { return }
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

    /// Sends `signal` to the child (`SIGSTOP`, `SIGCONT`).
    func send(_ signal: Int32) {
        process.send(signal)
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

/// The pins a crash writer reported, over all its runs on one directory, and what a cache reopened
/// after a kill must show of them: every reported pin still pinned, at its generation or a later
/// one (a new commit of a pinned key stays pinned), and no key whose unpin, removal or
/// `removeAll` was reported pinned again; only the key of the operation under way at the kill
/// ("I <key>" without its outcome) may be either.
struct PinLedger {
    /// One line of the child's about pins.
    enum Report: Equatable {
        case intent(key: String)  // "I <key>", "I *" for every key
        case commit(key: String, generation: UInt64, pinned: Bool)
        case pinned(key: String, generation: UInt64)
        case unpinned(key: String)
        case removed(key: String)
        case removedAll
        case unchanged  // "Q" (over the quota) or "N" (nothing to pin)

        init?(_ fields: [Substring]) {
            switch (fields.first, fields.count) {
            case ("I", 2): self = .intent(key: String(fields[1]))
            case ("C", 4), ("C", 5):
                guard let generation = UInt64(fields[2]) else { return nil }
                self = .commit(key: String(fields[1]), generation: generation, pinned: fields.count == 5 && fields[4] == "P")
            case ("P", 3):
                guard let generation = UInt64(fields[2]) else { return nil }
                self = .pinned(key: String(fields[1]), generation: generation)
            case ("U", 2): self = .unpinned(key: String(fields[1]))
            case ("R", 2): self = .removed(key: String(fields[1]))
            case ("A", 1): self = .removedAll
            case ("Q", 2), ("N", 2): self = .unchanged
            default: return nil
            }
        }
    }

    /// Keys reported pinned, with the generation they were last reported at.
    private(set) var pinned: [String: UInt64] = [:]
    /// Keys whose unpin, removal or `removeAll` was reported last.
    private var unpinned: Set<String> = []
    /// The key an operation under way at the kill may have changed ("*": every key).
    private var inFlight: String?

    /// Applies one run's reports, in order.
    mutating func apply(_ reports: [Report]) {
        for report in reports {
            switch report {
            case .intent(let key):
                inFlight = key
            case .commit(let key, let generation, let pin):
                if pin || pinned[key] != nil {
                    pinned[key] = generation
                    unpinned.remove(key)
                }
                if pin { inFlight = nil }
            case .pinned(let key, let generation):
                pinned[key] = generation
                unpinned.remove(key)
                inFlight = nil
            case .unpinned(let key), .removed(let key):
                pinned[key] = nil
                unpinned.insert(key)
                inFlight = nil
            case .removedAll:
                unpinned.formUnion(pinned.keys)
                pinned.removeAll()
                inFlight = nil
            case .unchanged:
                inFlight = nil
            }
        }
    }

    /// Checks the reopened `cache` against the ledger; returns what is wrong (empty: nothing).
    /// Then takes what the cache shows as the truth for the key under way at the kill.
    mutating func check(_ cache: any FileCaching, quota: Int) -> [String] {
        var problems: [String] = []
        let shown = Dictionary(uniqueKeysWithValues: cache.pinnedEntries().map { ($0.key, $0) })
        let uncertain: (String) -> Bool = { [inFlight] key in inFlight == "*" || inFlight == key }
        for (key, generation) in pinned where !uncertain(key) {
            guard let entry = shown[key] else {
                problems.append("\(key): reported pinned at generation \(generation), not pinned after the kill")
                continue
            }
            let found = CrashPayload.generation(of: entry) ?? 0
            if found < generation { problems.append("\(key): pinned at generation \(found), older than the reported \(generation)") }
            if (try? cache.readData(for: entry)) != CrashPayload.bytes(key: key, generation: found) {
                problems.append("\(key): pinned entry's bytes are not its generation's")
            }
        }
        for key in shown.keys where pinned[key] == nil && !uncertain(key) {
            problems.append(
                unpinned.contains(key)
                    ? "\(key): reported unpinned or removed, pinned again after the kill" : "\(key): pinned, but never reported pinned")
        }
        let statistics = cache.statistics
        if statistics.pinnedBytes > quota { problems.append("\(statistics.pinnedBytes) pinned bytes over the quota of \(quota)") }
        if statistics.pinnedCount != shown.count || statistics.pinnedBytes != shown.values.reduce(0, { $0 + $1.byteCount }) {
            problems.append("statistics \(statistics) disagree with the \(shown.count) pinned entries")
        }
        // What the kill left is what the next run starts from.
        if let inFlight {
            for key in inFlight == "*" ? Array(Set(pinned.keys).union(unpinned)) : [inFlight] {
                if let entry = shown[key] {
                    pinned[key] = CrashPayload.generation(of: entry) ?? 0
                    unpinned.remove(key)
                } else {
                    pinned[key] = nil
                    unpinned.insert(key)
                }
            }
        }
        inFlight = nil
        return problems
    }
}
