import Foundation
import TestSupport
import Testing

/// Issue 19, item 3: when descriptors run out anyway (the app uses them too), nothing crashes
/// and nothing is corrupted. A child process (`DescriptorExhaustionChild`) lowers its limit to
/// 128 and takes every descriptor left, then: a load whose file cache cannot open a file is
/// served from memory, uncached, with a `fileCacheFailure` event naming the key, `create` and
/// `EMFILE`; a load that needs a new connection fails with `.transport`; once descriptors are
/// back, loads work, are cached, and every entry reads back intact with nothing left in
/// `loading/`. For both cache types.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct DescriptorExhaustionTests {
    static let steps = [
        "warm", "exhaust", "memory", "uncached", "event", "connection", "recover-third", "recover-second",
        "entry", "loading",
    ]

    @Test(arguments: ["single", "big"]) func runningOutOfDescriptorsCrashesNothingAndDamagesNothing(kind: String) throws {
        let directory = TemporaryDirectory(prefix: "descriptor-exhaustion")
        let child = try runChild(named: "DescriptorExhaustionChild", arguments: [directory.url.path, kind])
        let lines = child.lines
        #expect(child.ended, "the child hung: \(lines)")
        #expect(child.terminationReason == .exit, "the child crashed (signal \(child.terminationStatus)): \(lines)")
        #expect(child.terminationStatus == 0, "\(lines.filter { $0.contains(" FAIL ") })")
        for step in Self.steps {
            #expect(lines.contains { $0.hasPrefix(step + " ok") }, "step \(step): \(lines.filter { $0.hasPrefix(step) })")
        }
        print("reliability: descriptor exhaustion (\(kind)): " + lines.joined(separator: "; "))
    }
}
