import Dispatch
import Foundation
import ManagedCacheLocking

/// Thrown when the server refuses to continue a kept partial download: drop it and start over.
struct PartialDownloadRejected: Error {}

/// Receives one download: checks the status and the size limit, counts progress, and streams the
/// body into a file-cache writer and/or memory, or (without a file cache, past the in-memory
/// threshold) into a temporary file.
final class FetchReceiver: DataLoadReceiver {
    struct Result {
        var memory: Data?
        let writer: (any FileCacheWriter)?
        /// The body, when it went to a temporary file instead of memory.
        let spool: DownloadSpool?
        let byteCount: Int
        let lostData: Bool
        let notModified: Bool
    }

    private struct State {
        var memory: Data? = Data()
        /// The capacity `memory` was given from the announced length (see `_reserveMemory`).
        var reserved: Int?
        var writer: (any FileCacheWriter)?
        var spool: DownloadSpool?
        var received = 0
        var expected: Int?
        var lostData = false
        var notModified = false
        var lastActivity = MonotonicInstant.now
        /// The response's ETag or Last-Modified, which a resumed download must match.
        var validator: String?
        /// The idle watchdog stopped this download.
        var timedOut = false
        /// The fetch was cancelled: nothing more is written, the writer's descriptor is closed.
        var cancelled = false
        /// The request is not on its way yet (the transfer has not started running, or the loader
        /// holds it back for a connection): the idle timeout does not count.
        var waitingForConnection = true
    }

    private let state: Lock<State>
    private let maximumBodySize: Int
    private let inMemoryThreshold: Int
    private let acceptsNotModified: Bool
    private let resuming: PartialDownload?
    private let freshWriter: @Sendable () -> (any FileCacheWriter)?
    /// Whether a 2xx response head opens a writer with `freshWriter` (a fresh download).
    private let opensWriterOnResponse: Bool
    /// Whether a body past `inMemoryThreshold` goes to a temporary file (there is no file cache).
    private let spoolsLargeBodies: Bool
    private let callbacks: FetchCallbacks
    /// The key the download is for, named in the failures it reports.
    private let dataKey: String

    /// - Parameters:
    ///   - resuming: the partial download `writer` continues; the request asked for the rest.
    ///   - freshWriter: makes a writer for a clean restart when the server sends the whole body,
    ///     and for a fresh download when `opensWriterOnResponse`.
    ///   - opensWriterOnResponse: open the writer when a 2xx response head arrives; until then
    ///     (and if it cannot be opened) the body is kept in memory only.
    ///   - inMemoryThreshold: bodies past this size are kept on disk only, when there is a writer.
    ///   - spoolsLargeBodies: without a writer, a body past `inMemoryThreshold` goes to a temporary
    ///     file (`DownloadSpool`) instead of memory.
    init(
        dataKey: String, writer: (any FileCacheWriter)?, maximumBodySize: Int, inMemoryThreshold: Int, acceptsNotModified: Bool,
        resuming: PartialDownload? = nil, freshWriter: @escaping @Sendable () -> (any FileCacheWriter)? = { nil },
        opensWriterOnResponse: Bool = false, spoolsLargeBodies: Bool = false, callbacks: FetchCallbacks
    ) {
        var initial = State(writer: writer)
        if let resuming {
            initial.memory = nil  // the first bytes are on disk only
            initial.received = resuming.byteCount
            initial.validator = resuming.validator  // interrupted before the response: keep them as they were
        }
        self.state = Lock(initial)
        self.maximumBodySize = maximumBodySize
        self.inMemoryThreshold = inMemoryThreshold
        self.acceptsNotModified = acceptsNotModified
        self.resuming = resuming
        self.freshWriter = freshWriter
        self.opensWriterOnResponse = opensWriterOnResponse
        self.spoolsLargeBodies = spoolsLargeBodies
        self.callbacks = callbacks
        self.dataKey = dataKey
        LoadAccounting.receivers.withLock { $0 += 1 }
    }

    deinit {
        LoadAccounting.receivers.withLock { $0 -= 1 }
    }

    func didReceive(response: DataLoadResponse) throws {
        if state.withLock({ $0.cancelled }) { throw CancellationError() }
        if let resuming {
            try checkResumption(of: resuming, response: response)
        }
        if response.statusCode == 304, acceptsNotModified {
            state.withLock {
                $0.notModified = true
                $0.lastActivity = .now
            }
            return
        }
        if let code = response.statusCode, !(200..<300).contains(code) {
            throw ManagedCacheError.httpStatus(code: code)
        }
        if let expected = response.expectedContentLength, expected > maximumBodySize {
            throw ManagedCacheError.tooLarge(limit: maximumBodySize)
        }
        if let expected = response.expectedContentLength, expected > inMemoryThreshold {
            try openSpoolIfNeeded()
        }
        if opensWriterOnResponse, state.withLock({ $0.writer == nil && $0.received == 0 }) {
            let writer = freshWriter()  // outside the lock: it opens a file
            let late = state.withLock { state -> Bool in
                if !state.cancelled { state.writer = writer }
                return state.cancelled
            }
            if late {
                writer?.abort()
                throw CancellationError()
            }
        }
        let progress = state.withLock { state in
            _reserveMemory(for: response.expectedContentLength, in: &state)
            state.expected = response.expectedContentLength.map { $0 + state.received }
            state.validator = response.header("etag") ?? response.header("last-modified")
            state.lastActivity = .now
            return LoadProgress(receivedBytes: state.received, expectedBytes: state.expected)
        }
        callbacks.progress(progress, 0)
    }

    /// A `206` must continue exactly where the kept bytes end; a `200` (ranges ignored, or the
    /// validator changed) restarts cleanly with a fresh writer; a `416` drops the kept bytes.
    private func checkResumption(of partial: PartialDownload, response: DataLoadResponse) throws {
        if response.statusCode == 416 { throw PartialDownloadRejected() }
        if response.statusCode == 206 {
            let start = response.header("content-range").flatMap(Self.rangeStart)
            guard start == partial.byteCount else { throw PartialDownloadRejected() }
            return
        }
        let fresh = freshWriter()  // outside the lock: it opens a file and may report a failure
        let stale = state.withLock { state -> (any FileCacheWriter)? in
            defer {
                state.writer = fresh
                state.memory = Data()
                state.received = 0
            }
            return state.writer
        }
        stale?.abort()
    }

    /// The first byte position of a `Content-Range: bytes START-END/TOTAL` header.
    private static func rangeStart(_ header: String) -> Int? {
        guard let range = header.split(separator: " ").last?.split(separator: "-").first else { return nil }
        return Int(range)
    }

    func didReceive(_ chunk: Data) throws {
        let (notModified, outgrowsMemory) = state.withLock { state in
            (state.notModified, (state.memory?.count ?? 0) + chunk.count > inMemoryThreshold)
        }
        if notModified { return }  // a 304 has no body worth keeping
        if outgrowsMemory { try openSpoolIfNeeded() }
        // The manager is called back only after the lock is released: it may be cancelling this
        // download under its own lock, and `cancel()` takes this one.
        let (progress, offset, writeFailure) = try state.withLock { state -> (LoadProgress, Int, (any Error)?) in
            if state.cancelled { throw CancellationError() }
            state.lastActivity = .now
            let offset = state.received
            state.received += chunk.count
            if state.received > maximumBodySize { throw ManagedCacheError.tooLarge(limit: maximumBodySize) }
            if let spool = state.spool {
                // What was kept in memory goes first, once, then every chunk.
                do {
                    if let kept = state.memory, !kept.isEmpty { try spool.write(kept) }
                    state.memory = nil
                    try spool.write(chunk)
                } catch {
                    state.spool = nil
                    throw DownloadSpoolLost()
                }
            } else if state.memory != nil {
                state.memory!.append(chunk)
                if state.memory!.count > inMemoryThreshold, state.writer != nil { state.memory = nil }
            }
            var writeFailure: (any Error)?
            if let writer = state.writer {
                do {
                    try writer.write(chunk)
                } catch {
                    writer.abort()
                    state.writer = nil
                    writeFailure = error
                    if state.memory == nil { state.lostData = true }
                }
            }
            return (LoadProgress(receivedBytes: state.received, expectedBytes: state.expected), offset, writeFailure)
        }
        if let writeFailure {
            callbacks.event(.fileCacheFailure(key: dataKey, operation: .write, error: FileCacheError(writeFailure)))
            if state.withLock({ $0.lostData }) { throw FileCacheWriteLost() }
        }
        callbacks.progress(progress, chunk.count)
        callbacks.bytes?(chunk, offset)
    }

    /// Without a writer and when spooling, opens the temporary file the body goes to (outside the
    /// lock: it creates a file), once. Without one (it could not be created) the body stays in memory.
    private func openSpoolIfNeeded() throws {
        guard spoolsLargeBodies, state.withLock({ $0.spool == nil && $0.writer == nil }) else { return }
        guard let spool = DownloadSpool.make() else { return }
        let late = state.withLock { state -> Bool in
            if !state.cancelled, state.spool == nil { state.spool = spool }
            return state.cancelled
        }
        if late { throw CancellationError() }
    }

    /// Marks the download as stopped for idleness (by `IdleWatchdog`).
    func markTimedOut() { state.withLock { $0.timedOut = true } }

    /// Whether the idle watchdog stopped the download.
    var didTimeOut: Bool { state.withLock { $0.timedOut } }

    func requestIsWaitingForConnection() { state.withLock { $0.waitingForConnection = true } }

    func requestDidStart() {
        state.withLock {
            $0.waitingForConnection = false
            $0.lastActivity = .now
        }
    }

    /// Seconds without activity; 0 while the request waits for a connection.
    func secondsSinceLastActivity() -> Double {
        state.withLock { $0.waitingForConnection ? 0 : MonotonicInstant.now.seconds(since: $0.lastActivity) }
    }

    /// The fetch was cancelled: stops taking bytes and closes the writer's descriptor now, without
    /// waiting for the transfer to end; the file stays for `suspendOrAbortWriter` to keep or
    /// discard. Cheap (one `close`), so it may run in a cancellation handler under a caller's lock.
    ///
    /// Why: a cancelled download's transfer ends when the loader has torn its connection down,
    /// which can take a while under load; until then its descriptor counted against the process's
    /// limit beyond what is in flight.
    func cancel() {
        let (writer, spool) = state.withLock { state -> ((any FileCacheWriter)?, DownloadSpool?) in
            state.cancelled = true
            return (state.writer, state.spool)
        }
        (writer as? StoreWriter)?.releaseDescriptor()
        spool?.close()
    }

    /// Discards anything written to the file cache.
    func abortWriter() {
        let writer = state.withLock { state -> (any FileCacheWriter)? in
            defer { state.writer = nil }
            return state.writer
        }
        writer?.abort()
    }

    /// After an interruption: keeps what was written as a resumable partial download when
    /// `resumable` and the response carried a validator, else discards it.
    func suspendOrAbortWriter(resumable: Bool) {
        let (writer, validator) = state.withLock { state -> ((any FileCacheWriter)?, String?) in
            defer { state.writer = nil }
            return (state.writer, state.received > 0 ? state.validator : nil)
        }
        if resumable, let validator {
            writer?.suspend(validator: validator)
        } else {
            writer?.abort()
        }
    }

    /// The body once the loader has returned.
    func finish() -> Result {
        var (result, reserved) = state.withLock { state in
            let result = Result(
                memory: state.memory, writer: state.writer, spool: state.spool, byteCount: state.received,
                lostData: state.lostData, notModified: state.notModified)
            return (result, state.reserved)
        }
        result.spool?.close()
        if let memory = result.memory, Self.hasSlack(memory, reserved: reserved) { result.memory = Self.compacted(memory) }
        return result
    }

    // MARK: - The body's memory (a memory cache holds at most 1.25× its byte limit)

    /// Gives an empty in-memory body the capacity the response announced, when that fits in
    /// memory at all.
    ///
    /// Why: a `Data` grown chunk by chunk (16 KiB from FoundationNetworking) ends with up to twice
    /// the capacity it needs, typically 1.2× for 100 KB bodies (122,888 bytes allocated for
    /// 100,000), and a decoder that keeps the bytes (`DataDecoder`, a `Payload`) keeps that slack
    /// in the memory cache, which counts only `count`: a cache limited to 50 MiB held 61 MiB.
    /// Reserved up front, the body is allocated once, at its size, and never copied as it grows.
    private func _reserveMemory(for expected: Int?, in state: inout State) {
        guard let expected, expected > 0, expected <= inMemoryThreshold, state.spool == nil,
            let memory = state.memory, memory.isEmpty
        else { return }
        state.memory = Data(capacity: expected)
        state.reserved = expected
    }

    /// Whether `memory` holds noticeably more capacity than bytes: it grew chunk by chunk (no
    /// announced length, or more bytes than announced: up to twice its size), or the server sent
    /// well under the length it announced (the unused part of the reservation).
    static func hasSlack(_ memory: Data, reserved: Int?) -> Bool {
        guard let reserved, memory.count <= reserved else { return memory.count >= compactionFloor }
        let unused = reserved - memory.count
        return unused >= compactionFloor && unused > reserved / 8
    }

    /// Slack under this size is left alone: a copy would cost more than it frees.
    static let compactionFloor = 4_096

    /// A copy of `memory` in storage of exactly its size.
    static func compacted(_ memory: Data) -> Data {
        memory.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return Data() }
            return Data(bytes: base, count: bytes.count)
        }
    }
}

/// Thrown when the temporary file of a download without a file cache failed (the disk is full or
/// gone): the download starts over, kept in memory.
struct DownloadSpoolLost: Error {}

// MARK: - The downloads' idle timeout

/// Stops downloads that received nothing for longer than their timeout: one timer for the whole
/// process instead of a sleeping timer task beside every download.
///
/// Why: a timer task per load added a task group and two thread hops to every download, and a
/// cancelled `Task.sleep` keeps its memory until its deadline (30 s by default), so every load of
/// the last 30 s stayed in memory. It ticks every 50 ms on the engine's timer thread
/// (`DeadlineTimer.shared`), and only while downloads run.
final class IdleWatchdog: Sendable {
    /// The process-wide watchdog.
    static let shared = IdleWatchdog()

    private struct Watched {
        let receiver: FetchReceiver
        let timeout: Double
        let stop: @Sendable () -> Void
    }

    private struct State {
        var watched: [UInt64: Watched] = [:]
        var nextIdentifier: UInt64 = 0
        /// Whether the next tick is queued on the timer.
        var ticking = false
    }

    private let state = Lock(State())
    private let timer: DeadlineTimer
    private static let tick = 0.05

    init(timer: DeadlineTimer = .shared) {
        self.timer = timer
    }

    /// Watches `receiver`: if it reports no activity for `timeout` seconds, it is marked timed out
    /// and `stop` is called. Returns a token for `unwatch`.
    func watch(_ receiver: FetchReceiver, timeout: Double, stop: @escaping @Sendable () -> Void) -> UInt64 {
        let (token, startsTicking) = state.withLock { state -> (UInt64, Bool) in
            state.nextIdentifier &+= 1
            state.watched[state.nextIdentifier] = Watched(receiver: receiver, timeout: timeout, stop: stop)
            defer { state.ticking = true }
            return (state.nextIdentifier, !state.ticking)
        }
        if startsTicking { timer.run(after: Self.tick) { [weak self] in self?.check() } }
        return token
    }

    /// Stops watching (the download ended). The ticks stop at the next one that finds nothing watched.
    func unwatch(_ token: UInt64) {
        _ = state.withLock { $0.watched.removeValue(forKey: token) }
    }

    private func check() {
        let (expired, ticksAgain) = state.withLock { state -> ([Watched], Bool) in
            let expired = state.watched.filter { $0.value.receiver.secondsSinceLastActivity() >= $0.value.timeout }
            for token in expired.keys { state.watched.removeValue(forKey: token) }
            state.ticking = !state.watched.isEmpty
            return (Array(expired.values), state.ticking)
        }
        if ticksAgain { timer.run(after: Self.tick) { [weak self] in self?.check() } }
        for watched in expired {
            watched.receiver.markTimedOut()
            watched.stop()
        }
    }
}
