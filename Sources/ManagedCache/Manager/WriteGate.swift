import ManagedCacheLocking

/// Orders a load's file-cache writes against an object the app stores over it.
///
/// A load writes through its gate: the download's commit (one gate per fetch), a variant made by
/// a decode (one gate per decode that stores a variant), a store's own bytes (one gate per
/// store). When a stored object supersedes the load, the manager closes the gate, under its lock
/// and without waiting: every write that has not begun is skipped from then on. The store waits
/// (`waitUntilIdle()`) for a write that had already begun, and only then writes its own bytes, so
/// the stored object is what the file cache keeps.
///
/// Nothing is held while a write runs: `begin()` and `end()` take the gate's lock for a moment
/// each, so closing never blocks the manager's lock behind a disk.
final class WriteGate: Sendable {
    private struct State {
        var isClosed = false
        var writers = 0
    }

    private let state = Lock(State())

    /// Whether a write may start now; when `true`, call `end()` once it is done.
    func begin() -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.writers += 1
            return true
        }
    }

    /// A write that `begin()` allowed has finished.
    func end() {
        state.withLock { $0.writers -= 1 }
    }

    /// Runs `write` unless the gate is closed; returns whether it ran.
    @discardableResult
    func write(_ write: () throws -> Void) rethrows -> Bool {
        guard begin() else { return false }
        defer { end() }
        try write()
        return true
    }

    /// Runs `write` unless `gate` is closed; with no gate, always. Returns whether it ran.
    @discardableResult
    static func write(through gate: WriteGate?, _ write: () throws -> Void) rethrows -> Bool {
        guard let gate else {
            try write()
            return true
        }
        return try gate.write(write)
    }

    /// Skips every write that has not begun. Never waits.
    func close() {
        state.withLock { $0.isClosed = true }
    }

    /// Whether `close()` was called.
    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Whether no write is running.
    var isIdle: Bool { state.withLock { $0.writers == 0 } }

    /// Returns once no write is running (after `close()`, none can start). Writes are single file
    /// commits, so this waits milliseconds; it sleeps rather than blocking a thread.
    func waitUntilIdle() async {
        while !isIdle {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}
