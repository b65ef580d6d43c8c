import CrashPayload
import Foundation
import ManagedCacheLocking
import Testing

@testable import ManagedCache

// Fixtures for the file-cache tests. (A shared TestSupport target will absorb the generic ones.)

/// Runs `body` with a new empty directory and deletes it afterwards.
func withTemporaryDirectory<T>(_ name: String = #function, _ body: (URL) throws -> T) throws -> T {
    let url = try makeTemporaryDirectory(name)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// `withTemporaryDirectory` for async bodies.
func withTemporaryDirectory<T>(_ name: String = #function, _ body: (URL) async throws -> T) async throws -> T {
    let url = try makeTemporaryDirectory(name)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

private func makeTemporaryDirectory(_ name: String) throws -> URL {
    let safe = String(name.prefix(40).map { $0.isLetter || $0.isNumber ? $0 : "-" })
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("ManagedCacheTests-\(safe)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A clock the tests move by hand, so expiry never depends on real time passing.
final class TestClock: Sendable {
    private let time = Lock(Date(timeIntervalSinceReferenceDate: 800_000_000))

    var now: Date { time.withLock { $0 } }

    func advance(by interval: TimeInterval) {
        time.withLock { $0 += interval }
    }

    /// A closure for the caches' `clock` parameter.
    var closure: @Sendable () -> Date { { self.now } }
}

/// The two cache types, for tests that hold for both.
enum CacheKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case single
    case big

    var testDescription: String { self == .single ? "FileCache" : "BigFileCache" }

    /// Opens a cache of this kind at `url`.
    func open(
        _ url: URL, byteLimit: Int? = nil, countLimit: Int? = nil, maximumAge: TimeInterval? = nil,
        clock testClock: TestClock? = nil, replaysInBackground: Bool = true
    ) throws -> any FileCaching {
        let clock: @Sendable () -> Date
        if let testClock {
            clock = testClock.closure
        } else {
            clock = { Date() }
        }
        switch self {
        case .single:
            return try FileCache(
                directory: url,
                configuration: .init(
                    byteLimit: byteLimit, countLimit: countLimit,
                    maximumAge: maximumAge), clock: clock, replaysInBackground: replaysInBackground)
        case .big:
            return try BigFileCache(
                directory: url,
                configuration: .init(
                    byteLimit: byteLimit, countLimit: countLimit,
                    maximumAge: maximumAge), clock: clock, replaysInBackground: replaysInBackground)
        }
    }
}

/// Deterministic test bytes: `count` bytes derived from `seed`.
func testBytes(_ count: Int, seed: UInt64) -> Data {
    var generator = SplitMix(state: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    for index in 0..<count where index % 8 == 0 {
        let value = generator.next()
        for shift in 0..<8 where index + shift < count {
            bytes[index + shift] = UInt8(truncatingIfNeeded: value >> UInt64(shift * 8))
        }
    }
    return Data(bytes)
}

/// The tests' name for the crash writer's generator.
typealias SplitMix = SplitMix64

/// Regular files under `url`, as paths relative to it, sorted.
func regularFiles(under url: URL) -> [String] {
    let root = url.standardizedFileURL.path
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
    var files: [String] = []
    while let relative = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
            files.append(relative)
        }
    }
    return files.sorted()
}

/// The entry files in `ready/` (relative to the root), sorted.
func readyFiles(_ root: URL) -> [String] {
    regularFiles(under: root.appendingPathComponent("ready")).map { "ready/" + $0 }
}

/// Names in `loading/`.
func loadingFiles(_ root: URL) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("loading").path)) ?? []
}

/// An entry's file path relative to the cache root.
func relativePath(of entry: FileCacheEntry, in root: URL) -> String {
    let base = root.standardizedFileURL.path + "/"
    let path = entry.fileURL.standardizedFileURL.path
    return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
}

/// The slot count a lookup table's header records (`JournalLookupTable`): the slots follow the
/// header, 16 bytes each, and the regions' checksums follow them.
func lookupTableSlotCount(_ table: Data) -> Int {
    Int(table.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) })
}

/// The store behind a `FileCache` or a `BigFileCache`; nil for other caches.
func storeBehind(_ cache: any FileCaching) -> CacheStore? {
    (cache as? JournaledFileCache)?.store
}

/// The store behind a `FileCache` or a `BigFileCache`, or a failed requirement.
func cacheStore(of cache: any FileCaching, sourceLocation: SourceLocation = #_sourceLocation) throws -> CacheStore {
    try #require(storeBehind(cache), sourceLocation: sourceLocation)
}

/// Checks that every entry reads back and that `ready/` holds exactly the entries' files and
/// `loading/` nothing; returns the entries.
@discardableResult
func expectConsistent(_ cache: any FileCaching, root: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> [FileCacheEntry] {
    // An opening's background replay deletes what its limits evicted after installing the index.
    storeBehind(cache)?.finishOpeningAndItsDeletions()
    let entries = cache.entriesByRecency(limit: .max)
    let statistics = cache.statistics
    #expect(statistics.count == entries.count, sourceLocation: sourceLocation)
    #expect(statistics.totalBytes == entries.reduce(0) { $0 + $1.byteCount }, sourceLocation: sourceLocation)
    #expect(Set(entries.map(\.key)).count == entries.count, sourceLocation: sourceLocation)
    for entry in entries {
        let data = try cache.readData(for: entry)
        #expect(data.count == entry.byteCount, sourceLocation: sourceLocation)
    }
    #expect(readyFiles(root) == entries.map { relativePath(of: $0, in: root) }.sorted(), sourceLocation: sourceLocation)
    #expect(loadingFiles(root).isEmpty, sourceLocation: sourceLocation)
    return entries
}

/// Holds a lock on a thread of its own until released: a store's mutex, as a writer appending to
/// the journal would, or a manager's, as a preempted holder would.
final class MutexHolder: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let once = Lock(false)

    convenience init(_ store: CacheStore) {
        self.init { section in store.state.withLock { _ in section() } }
    }

    convenience init(_ manager: ManagerLock) {
        self.init { section in manager.withLock { _ in section() } }
    }

    /// Runs `hold` on a new thread, with a section that waits for `release()`; returns once the
    /// section has begun.
    private init(holding hold: @escaping @Sendable (() -> Void) -> Void) {
        let held = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [released] in
            hold {
                held.signal()
                released.wait()
            }
        }
        held.wait()
    }

    /// A holder dropped unreleased (a test that threw before releasing it) lets the mutex go:
    /// the cache's closing, which needs the mutex, would otherwise wait for it forever.
    deinit { release() }

    /// Lets the mutex go (once; later calls do nothing).
    func release() {
        let first = once.withLock { done in
            defer { done = true }
            return !done
        }
        if first { released.signal() }
    }
}
