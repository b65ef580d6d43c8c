import Foundation
import TestSupport
import Testing

/// When descriptors run out anyway (the app uses them too), nothing crashes and nothing is
/// corrupted. A child process (`DescriptorExhaustionChild`) lowers its limit to 128 and takes
/// every descriptor left, then: a load whose file cache cannot open a file is served from
/// memory, uncached, with a `fileCacheFailure` event naming the key, `create` and `EMFILE`; a
/// load that needs a new connection fails with `.transport`; once descriptors are back, loads
/// work, are cached, and every entry reads back intact with nothing left in `loading/`. For both
/// cache types.
///
/// On Linux, libdispatch's thread-pool monitor traps when it cannot open `/proc/<tid>/stat`,
/// which a process out of descriptors cannot, if its global queues have work waiting at one of
/// the monitor's checks (once a second): on a loaded machine about 1 run in 20 of the child died
/// of it. That trap is the platform's, not the engine's: the child reports where a trap hit
/// (`TrapReport.swift`), and a run that libdispatch killed is run again (at most
/// `attempts` runs); any other crash fails the test.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct DescriptorExhaustionTests {
    static let steps = [
        "warm", "exhaust", "memory", "uncached", "event", "connection", "recover-third", "recover-second",
        "entry", "loading",
    ]
    static let attempts = 4

    @Test(arguments: ["single", "big"]) func runningOutOfDescriptorsCrashesNothingAndDamagesNothing(kind: String) throws {
        var child: ChildRun?
        var platformTraps = 0
        for _ in 0..<Self.attempts {
            let directory = TemporaryDirectory(prefix: "descriptor-exhaustion")
            let report = directory.url.appendingPathComponent("trap-report").path
            let run = try runChild(
                named: "DescriptorExhaustionChild", arguments: [directory.url.appendingPathComponent("cache").path, kind, report])
            child = run
            let trap = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
            guard run.terminationReason == .uncaughtSignal, trap.hasPrefix("trap in libdispatch") else { break }
            platformTraps += 1
            print(
                "reliability: descriptor exhaustion (\(kind)): the child died in libdispatch's pool monitor (signal \(run.terminationStatus)); running it again"
            )
        }
        let lines = try #require(child).lines
        #expect(child?.ended == true, "the child hung: \(lines)")
        #expect(child?.terminationReason == .exit, "the child crashed (signal \(child?.terminationStatus ?? 0)): \(lines)")
        #expect(child?.terminationStatus == 0, "\(lines.filter { $0.contains(" FAIL ") })")
        for step in Self.steps {
            #expect(lines.contains { $0.hasPrefix(step + " ok") }, "step \(step): \(lines.filter { $0.hasPrefix(step) })")
        }
        print(
            "reliability: descriptor exhaustion (\(kind)), \(platformTraps) runs killed by libdispatch first: "
                + lines.joined(separator: "; "))
    }
}
