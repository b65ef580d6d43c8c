import Foundation
import ManagedCacheLocking
import Testing

/// Keeps tests that start child processes apart from tests that reopen file caches and expect
/// to be their directory's only user.
///
/// A file cache decides at open whether it is alone (whether it may empty `loading/`, delete
/// leftovers and reconcile after a crash) with an exclusive `flock` on `session.lock`. `fork`
/// copies every descriptor of the process, close-on-exec ones included, into the child until it
/// calls `exec`; if another thread closes a cache in that window, the child's copy keeps its
/// shared lock alive, and a reopen at that moment believes another instance is open and skips
/// its clean-up (measured: 8 to 22 reopens in 300 skipped it while another thread started
/// `/bin/true` in a loop). Tests of the clean-up mark themselves `.exclusiveOfChildProcesses`,
/// tests that start processes `.spawnsChildProcesses`; the two groups never overlap, and each
/// runs in parallel within itself.
public struct ChildProcessGate: TestTrait, SuiteTrait, TestScoping {
    /// Which side of the gate a test is on.
    public enum Role: Sendable, Equatable {
        case spawns
        case excludesSpawns
    }

    public let role: Role

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await TwoGroupGate.shared.enter(role)
        do {
            try await function()
        } catch {
            TwoGroupGate.shared.leave(role)
            throw error
        }
        TwoGroupGate.shared.leave(role)
    }
}

extension Trait where Self == ChildProcessGate {
    /// The test starts child processes: it never runs beside an `.exclusiveOfChildProcesses` test.
    public static var spawnsChildProcesses: Self { Self(role: .spawns) }
    /// The test reopens file caches and relies on being alone: no child process starts meanwhile.
    public static var exclusiveOfChildProcesses: Self { Self(role: .excludesSpawns) }
}

/// Lets any number of holders of one role in at a time, never both roles; waiters are let in
/// in arrival order of roles, so neither group starves.
final class TwoGroupGate: Sendable {
    static let shared = TwoGroupGate()

    private struct State {
        var active: ChildProcessGate.Role?
        var holders = 0
        var waiting: [(role: ChildProcessGate.Role, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Lock(State())

    func enter(_ role: ChildProcessGate.Role) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                if state.active == nil || (state.active == role && state.waiting.isEmpty) {
                    state.active = role
                    state.holders += 1
                    return true
                }
                state.waiting.append((role, continuation))
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    func leave(_ role: ChildProcessGate.Role) {
        let admitted = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holders -= 1
            guard state.holders == 0 else { return [] }
            state.active = nil
            guard let next = state.waiting.first?.role else { return [] }
            // Let in every waiter of the next role; the others keep waiting.
            let entering = state.waiting.filter { $0.role == next }
            state.waiting.removeAll { $0.role == next }
            state.active = next
            state.holders = entering.count
            return entering.map(\.continuation)
        }
        for continuation in admitted { continuation.resume() }
    }
}
