import Foundation
import ManagedCache
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `FileCaching` wrapper whose disk can be made to fail on demand: read-only, full after a
/// number of bytes, or unreadable. Everything else goes to the wrapped cache. For tests of what a
/// manager does when its disk misbehaves, on machines where a test cannot make a real disk fail
/// (root ignores permissions; mounting may not be allowed).
public final class FaultyFileCache: FileCaching {
    /// How the disk misbehaves.
    public enum Fault: Sendable, Equatable {
        /// No fault: every call goes to the wrapped cache.
        case none
        /// Writes, commits and metadata updates fail with `EROFS`; reads work.
        case readOnly
        /// Writes succeed until `remainingBytes` more bytes have been written (by all writers
        /// together), then fail with `ENOSPC`, as do commits and new writers.
        case full(remainingBytes: Int)
        /// Lookups find nothing, reads fail with `EIO`; writes work.
        case unreadable
    }

    private struct State {
        var fault: Fault = .none
        var injectedFailures = 0
    }

    /// The cache the calls go to.
    public let base: any FileCaching
    private let state = Lock(State())

    /// Wraps `base`, with no fault to begin with.
    public init(wrapping base: any FileCaching) {
        self.base = base
    }

    /// The current fault; change it at any time.
    public var fault: Fault {
        get { state.withLock { $0.fault } }
        set { state.withLock { $0.fault = newValue } }
    }

    /// How many operations failed because of the fault.
    public var injectedFailures: Int { state.withLock { $0.injectedFailures } }

    /// Throws the fault's error for an operation that writes `byteCount` bytes (0 for a commit or
    /// an update), or consumes the bytes from a full disk's remaining space.
    fileprivate func checkWrite(byteCount: Int, operation: String) throws {
        let failure = state.withLock { state -> FileCacheError? in
            switch state.fault {
            case .none, .unreadable:
                return nil
            case .readOnly:
                state.injectedFailures += 1
                return .io(operation: operation, errno: EROFS)
            case .full(let remaining):
                if remaining <= 0 || byteCount > remaining {
                    state.fault = .full(remainingBytes: 0)
                    state.injectedFailures += 1
                    return .io(operation: operation, errno: ENOSPC)
                }
                state.fault = .full(remainingBytes: remaining - byteCount)
                return nil
            }
        }
        if let failure { throw failure }
    }

    private func checkRead(operation: String) throws {
        let unreadable = state.withLock { state -> Bool in
            guard state.fault == .unreadable else { return false }
            state.injectedFailures += 1
            return true
        }
        if unreadable { throw FileCacheError.io(operation: operation, errno: EIO) }
    }

    public func entry(forKey key: String) -> FileCacheEntry? {
        if (try? checkRead(operation: "lookup")) == nil { return nil }
        return base.entry(forKey: key)
    }

    public func readData(for entry: FileCacheEntry) throws -> Data {
        try checkRead(operation: "read")
        return try base.readData(for: entry)
    }

    public func verify(_ entry: FileCacheEntry) throws {
        try checkRead(operation: "verify")
        try base.verify(entry)
    }

    public func makeWriter(forKey key: String) throws -> any FileCacheWriter {
        try checkWrite(byteCount: 0, operation: "create")
        return Writer(cache: self, base: try base.makeWriter(forKey: key))
    }

    // `store` is the protocol's default: it goes through `makeWriter` above, so its faults apply.

    public func updateMetadata(_ metadata: FileCacheMetadata, forKey key: String) throws {
        try checkWrite(byteCount: 0, operation: "update")
        try base.updateMetadata(metadata, forKey: key)
    }

    public func removeEntry(forKey key: String) {
        guard fault != .readOnly else { return }
        base.removeEntry(forKey: key)
    }

    public func removeAll() {
        guard fault != .readOnly else { return }
        base.removeAll()
    }

    public func trim() {
        base.trim()
    }

    public var statistics: FileCacheStatistics { base.statistics }

    public func entriesByRecency(limit: Int) -> [FileCacheEntry] { base.entriesByRecency(limit: limit) }

    public func entriesUsedInPreviousSession(limit: Int) -> [FileCacheEntry] {
        base.entriesUsedInPreviousSession(limit: limit)
    }

    /// A writer of the wrapped cache that consults the fault before every write and the commit.
    private final class Writer: FileCacheWriter {
        private let cache: FaultyFileCache
        private let base: any FileCacheWriter

        init(cache: FaultyFileCache, base: any FileCacheWriter) {
            self.cache = cache
            self.base = base
        }

        func write(_ chunk: Data) throws {
            do {
                try cache.checkWrite(byteCount: chunk.count, operation: "write")
            } catch {
                base.abort()
                throw error
            }
            try base.write(chunk)
        }

        func commit(metadata: FileCacheMetadata) throws -> FileCacheEntry {
            do {
                try cache.checkWrite(byteCount: 0, operation: "commit")
            } catch {
                base.abort()
                throw error
            }
            return try base.commit(metadata: metadata)
        }

        func abort() { base.abort() }
    }
}
