import Foundation
import Synchronization

/// Receives one download: checks the status and the size limit, counts progress, and streams the
/// body into a file-cache writer and/or memory.
final class FetchReceiver: DataLoadReceiver {
    struct Result {
        let memory: Data?
        let writer: (any FileCacheWriter)?
        let byteCount: Int
        let lostData: Bool
        let notModified: Bool
    }

    private struct State {
        var memory: Data? = Data()
        var writer: (any FileCacheWriter)?
        var received = 0
        var expected: Int?
        var lostData = false
        var notModified = false
        var lastActivity = ContinuousClock.now
    }

    private let state: Mutex<State>
    private let maximumBodySize: Int
    private let inMemoryThreshold: Int
    private let acceptsNotModified: Bool
    private let callbacks: FetchCallbacks

    init(writer: (any FileCacheWriter)?, maximumBodySize: Int, inMemoryThreshold: Int, acceptsNotModified: Bool,
         callbacks: FetchCallbacks) {
        self.state = Mutex(State(writer: writer))
        self.maximumBodySize = maximumBodySize
        self.inMemoryThreshold = inMemoryThreshold
        self.acceptsNotModified = acceptsNotModified
        self.callbacks = callbacks
    }

    func didReceive(response: DataLoadResponse) throws {
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
        let progress = state.withLock { state in
            state.expected = response.expectedContentLength
            state.lastActivity = .now
            return LoadProgress(receivedBytes: 0, expectedBytes: state.expected)
        }
        callbacks.progress(progress, 0)
    }

    func didReceive(_ chunk: Data) throws {
        if state.withLock({ $0.notModified }) { return }  // a 304 has no body worth keeping
        let progress = try state.withLock { state -> LoadProgress in
            state.lastActivity = .now
            state.received += chunk.count
            if state.received > maximumBodySize { throw ManagedCacheError.tooLarge(limit: maximumBodySize) }
            if state.memory != nil {
                state.memory!.append(chunk)
                if state.memory!.count > inMemoryThreshold, state.writer != nil { state.memory = nil }
            }
            if let writer = state.writer {
                do {
                    try writer.write(chunk)
                } catch {
                    writer.abort()
                    state.writer = nil
                    callbacks.event(.fileCacheFailure(key: "", operation: "write", error: String(describing: error)))
                    if state.memory == nil {
                        state.lostData = true
                        throw FileCacheWriteLost()
                    }
                }
            }
            return LoadProgress(receivedBytes: state.received, expectedBytes: state.expected)
        }
        callbacks.progress(progress, chunk.count)
    }

    func secondsSinceLastActivity() -> Double {
        let elapsed = state.withLock { ContinuousClock.now - $0.lastActivity }
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Discards anything written to the file cache.
    func abortWriter() {
        let writer = state.withLock { state -> (any FileCacheWriter)? in
            defer { state.writer = nil }
            return state.writer
        }
        writer?.abort()
    }

    /// The body once the loader has returned.
    func finish() -> Result {
        state.withLock { state in
            Result(memory: state.memory, writer: state.writer, byteCount: state.received, lostData: state.lostData,
                   notModified: state.notModified)
        }
    }
}
