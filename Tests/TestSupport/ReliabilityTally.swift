import Foundation
import ManagedCache
import ManagedCacheLocking
import Testing

/// Counts the cases a reliability test tries and the ones that fail, records every failed check
/// as a test issue, and prints the test's one-line figure:
///
///     reliability: network faults: 19 cases, 0 failures; 57 users told
///
/// A case fails when any check made for it fails. Thread-safe: cases may run in parallel.
public final class ReliabilityTally: Sendable {
    private struct State {
        var cases: [String] = []
        var failures: [String: [String]] = [:]
        var figures: [(name: String, value: Int)] = []
    }

    /// What the figure line calls the item ("network faults").
    public let item: String
    private let state = Lock(State())

    /// A tally for `item`.
    public init(item: String) {
        self.item = item
    }

    /// Counts a case (call once per case, before or after its checks).
    public func addCase(_ name: String) {
        state.withLock { $0.cases.append(name) }
    }

    /// Records a failure of case `name` unless `condition` holds; returns `condition`.
    @discardableResult
    public func check(
        _ condition: Bool, _ name: String, _ message: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        guard !condition else { return true }
        let text = message()
        state.withLock { $0.failures[name, default: []].append(text) }
        Issue.record(Comment(rawValue: "\(item), \(name): \(text)"), sourceLocation: sourceLocation)
        return false
    }

    /// Adds `amount` to the extra figure `name` (printed after the case counts, in first-use order).
    public func add(_ amount: Int, to name: String) {
        state.withLock { state in
            if let index = state.figures.firstIndex(where: { $0.name == name }) {
                state.figures[index].value += amount
            } else {
                state.figures.append((name, amount))
            }
        }
    }

    /// The value of the extra figure `name` (0 if never added to).
    public func figure(_ name: String) -> Int {
        state.withLock { state in state.figures.first { $0.name == name }?.value ?? 0 }
    }

    /// Cases counted so far.
    public var caseCount: Int { state.withLock { Set($0.cases).count } }

    /// Cases with at least one failed check.
    public var failureCount: Int { state.withLock { $0.failures.count } }

    /// Prints the figure line and returns it.
    @discardableResult
    public func report() -> String {
        let (cases, failures, figures) = state.withLock { state in
            (Set(state.cases).union(state.failures.keys).count, state.failures.count, state.figures)
        }
        var line = "reliability: \(item): \(cases) cases, \(failures) failures"
        if !figures.isEmpty {
            line += "; " + figures.map { "\($0.value) \($0.name)" }.joined(separator: ", ")
        }
        print(line)
        return line
    }
}

/// A weak reference, for checking that something was freed.
public final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    // Unchecked: `object` is only read after the test's writes are done (weak loads are atomic).
    public weak var object: Object?
    public init(_ object: Object?) { self.object = object }
    /// Whether the object is gone.
    public var isGone: Bool { object == nil }
}

/// Records what a manager reports through `Configuration.eventHandler`.
public final class EventLog: Sendable {
    private let events = Lock<[ManagerEvent]>([])

    public init() {}

    /// Pass this as the manager's `eventHandler`.
    public var handler: @Sendable (ManagerEvent) -> Void { { [self] event in events.withLock { $0.append(event) } } }

    /// Every event so far.
    public var all: [ManagerEvent] { events.withLock { $0 } }

    /// File-cache failures reported (the operation of each).
    public var fileCacheFailures: [String] {
        all.compactMap { if case .fileCacheFailure(_, let operation, _) = $0 { return operation.rawValue } else { return nil } }
    }

    /// Keys whose corrupt entries were removed.
    public var corruptEntries: [String] {
        all.compactMap { if case .corruptEntryRemoved(let key) = $0 { return key } else { return nil } }
    }

    /// Failed loads reported.
    public var loadFailures: [ManagedCacheError] {
        all.compactMap { if case .loadFailed(_, let error) = $0 { return error } else { return nil } }
    }
}
