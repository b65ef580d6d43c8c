import CrashPayload
import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Two processes share one cache and one of them is stopped (`SIGSTOP`), as iOS suspends an app:
/// between two operations it holds no lock at all, and stopped inside a journal write it makes
/// the other's operations refuse with `FileCacheError.busy` after a bounded wait, never hang.
/// Nothing is corrupt, and both go on once it is continued.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct FileCacheStoppedProcessTests {
    /// How long this process's instances wait for the journal lock.
    static let lockWait = 0.2
    /// How long any one operation may take here, stopped child or not: far past `lockWait`, far
    /// below "forever".
    static let operationBound = 10.0

    private func open(_ kind: CacheKind, _ root: URL) throws -> JournaledFileCache {
        switch kind {
        case .single: try FileCache(directory: root, configuration: .init(), clock: { Date() }, lockWait: Self.lockWait)
        case .big: try BigFileCache(directory: root, configuration: .init(), clock: { Date() }, lockWait: Self.lockWait)
        }
    }

    /// Runs `body` on a thread of its own and waits for it at most `operationBound` seconds:
    /// what it returned, or nil when it was still running (a hang).
    private func bounded<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        let result = Lock<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + Self.operationBound) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// Whether process `pid` is stopped (Linux: state `T` in `/proc/<pid>/stat`); nil elsewhere.
    private func isStopped(_ pid: Int32) -> Bool? {
        #if os(Linux)
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first == "T"
        #else
        return nil
        #endif
    }

    /// The `flock`s process `pid` holds, as `/proc/locks` lists them (Linux); nil elsewhere.
    private func locks(heldBy pid: Int32) -> [String]? {
        #if os(Linux)
        // Read to its end: Foundation's String(contentsOfFile:) stops after procfs's first page,
        // and the machine-wide table is longer than that while other suites hold locks.
        guard let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/locks")).readToEnd() else { return nil }
        let table = String(decoding: data, as: UTF8.self)
        return table.split(separator: "\n").map(String.init).filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 4 && fields[4] == "\(pid)"
        }
        #else
        return nil
        #endif
    }

    /// Starts the child in `stop` mode, lets `cache` catch up with its first 20 entries, and
    /// waits until it has stopped itself.
    private func startStoppedChild(
        _ kind: CacheKind, _ root: URL, where place: String, sharing cache: JournaledFileCache
    ) throws -> CrashWriterProcess {
        let child = try CrashWriterProcess(arguments: [root.path, kind.rawValue, "7", "stop", place, "child-"])
        #expect(child.read(timeout: waitBound) { $0.commits.count >= 20 && (place != "inside" || $0.ready) })
        #expect(cache.entry(forKey: "child-19") != nil)
        if place == "inside" { #expect(FileManager.default.createFile(atPath: root.path + ".go", contents: Data())) }
        #expect(waitUntilBlocking(timeout: waitBound) { isStopped(child.processIdentifier) ?? true })
        return child
    }

    /// The parent's own entries, in both instances' sight.
    private func parentBytes(_ index: Int) -> (Data, FileCacheMetadata) {
        let generation = UInt64(1000 + index)
        return (
            CrashPayload.bytes(key: "parent-\(index)", generation: generation),
            FileCacheMetadata(userInfo: ["generation": String(generation)])
        )
    }

    /// Every entry a new instance finds has its generation's bytes.
    private func expectIntact(_ kind: CacheKind, _ root: URL) throws -> Int {
        let cache = try open(kind, root)
        var count = 0
        for entry in cache.entriesByRecency(limit: 1_000) {
            let generation = try #require(CrashPayload.generation(of: entry))
            #expect(try cache.readData(for: entry) == CrashPayload.bytes(key: entry.key, generation: generation), "\(entry.key)")
            count += 1
        }
        return count
    }

    /// Stopped between two operations, the child holds no lock: every operation of this process,
    /// and a new instance's opening, is served at once.
    @Test(arguments: CacheKind.allCases) func aProcessStoppedBetweenOperationsHoldsNoLock(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try open(kind, root)
            let child = try startStoppedChild(kind, root, where: "between", sharing: cache)
            defer { _ = child.kill() }
            if let held = locks(heldBy: child.processIdentifier) { #expect(held.isEmpty, "the stopped child holds \(held)") }

            let served = bounded { () -> [String] in
                var failures: [String] = []
                do {
                    let (bytes, metadata) = parentBytes(0)
                    try cache.store(bytes, forKey: "parent-0", metadata: metadata)
                    guard let entry = cache.entry(forKey: "child-3") else { return ["no child-3"] }
                    _ = try cache.readData(for: entry)
                    try cache.removeEntryReportingFailure(forKey: "child-4")
                    let another = try open(kind, root)
                    if another.entry(forKey: "parent-0") == nil { failures.append("a new instance misses parent-0") }
                    let (more, moreMetadata) = parentBytes(1)
                    try another.store(more, forKey: "parent-1", metadata: moreMetadata)
                } catch {
                    failures.append("\(error)")
                }
                return failures
            }
            #expect(served == [], "an operation failed or hung")
            child.send(SIGCONT)
            #expect(child.waitForExit() == 0)
            #expect(try expectIntact(kind, root) == 30 - 1 - 1 + 2)  // the child's 30, less two removals, and the parent's 2
        }
    }

    /// Stopped inside a journal write, the child holds the journal lock: this process's hits are
    /// served, and its writes, removals and a new instance's opening are refused with `busy`
    /// within the bound. Once the child goes on, both finish their work and nothing is corrupt.
    @Test(arguments: CacheKind.allCases) func aProcessStoppedInsideAWriteMakesOthersRefuseNotWait(kind: CacheKind) throws {
        try withTemporaryDirectory { root in
            let cache = try open(kind, root)
            let child = try startStoppedChild(kind, root, where: "inside", sharing: cache)
            defer {
                _ = child.kill()
                // The go-ahead file lies beside the directory, which its removal leaves behind.
                try? FileManager.default.removeItem(atPath: root.path + ".go")
            }
            if let held = locks(heldBy: child.processIdentifier) {
                #expect(held.count == 1 && held[0].contains("FLOCK"), "the stopped child holds \(held)")
            }
            let outcomes = bounded { () -> [String: String] in
                func outcome(_ body: () throws -> Void) -> String {
                    do {
                        try body()
                        return "served"
                    } catch let error as FileCacheError {
                        if case .busy = error { return "busy" }
                        return "\(error)"
                    } catch {
                        return "\(error)"
                    }
                }
                var outcomes: [String: String] = [:]
                outcomes["read"] = outcome {
                    guard let entry = cache.entry(forKey: "child-5") else { throw FileCacheError.noEntry(key: "child-5") }
                    _ = try cache.readData(for: entry)
                }
                outcomes["write"] = outcome {
                    let (bytes, metadata) = parentBytes(0)
                    try cache.store(bytes, forKey: "parent-0", metadata: metadata)
                }
                outcomes["removal"] = outcome { try cache.removeEntryReportingFailure(forKey: "child-6") }
                outcomes["opening"] = outcome { _ = try open(kind, root) }
                outcomes["miss"] = cache.entry(forKey: "nowhere") == nil ? "served" : "found"
                return outcomes
            }
            let result = try #require(outcomes, "an operation hung behind the stopped child")
            #expect(result["read"] == "served")
            #expect(result["miss"] == "served")
            for operation in ["write", "removal", "opening"] {
                #expect(result[operation] == "busy", "\(operation): \(result[operation] ?? "-")")
            }

            child.send(SIGCONT)
            #expect(child.waitForExit() == 0)
            // Both go on: this process writes and removes once the lock is free.
            let (bytes, metadata) = parentBytes(0)
            try cache.store(bytes, forKey: "parent-0", metadata: metadata)
            try cache.removeEntryReportingFailure(forKey: "child-6")
            #expect(cache.entry(forKey: "child-stopped") != nil)
            // The child's 30 and its stopped commit, less its removal and ours, and the parent's one.
            #expect(try expectIntact(kind, root) == 31 - 2 + 1)
        }
    }
}
