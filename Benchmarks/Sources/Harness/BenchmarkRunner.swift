import Foundation
import LoopbackServer

#if MANAGEDCACHE_LOCK_PROFILE
import ManagedCache
#endif

/// Runs the selected scenarios in order and prints the machine, the loopback server's ceiling and
/// the one results table.
struct BenchmarkRunner {
    let options: BenchmarkOptions
    let scenarios: [any BenchmarkScenario]

    /// Runs everything; returns the process exit status (0, or 1 when a scenario failed to run).
    func run() -> Int32 {
        if options.wantsHelp {
            print(BenchmarkOptions.usage)
            return 0
        }
        let selected = scenarios.filter { scenario in
            options.filter.map { scenario.identifier.contains($0) } ?? true
        }
        guard !selected.isEmpty else {
            print(
                "no scenario matches '\(options.filter ?? "")'; scenarios: "
                    + scenarios.map(\.identifier).joined(separator: ", "))
            return 1
        }
        let context = BenchmarkContext(options: options)
        print("ManagedCache benchmarks\(options.quick ? " (--quick)" : "")")
        print(MachineDescription.current.rendered())
        if selected.contains(where: \.usesNetwork) {
            printServerCeiling(context)
        }
        var table = ResultTable()
        var failed = false
        let start = Stopwatch.now()
        for scenario in selected {
            log("running \(scenario.identifier)…")
            let scenarioStart = Stopwatch.now()
            do {
                let rows = try scenario.run(in: context)
                table.append(contentsOf: rows)
            } catch {
                failed = true
                table.append(contentsOf: [
                    ResultRow(
                        scenario: scenario.identifier, ours: "failed: \(error)", baseline: "—", ratio: "—",
                        target: "—", met: false)
                ])
            }
            log("  \(scenario.identifier) took \(Format.seconds(Stopwatch.seconds(since: scenarioStart)))")
        }
        print("")
        print(table.rendered())
        print("")
        #if MANAGEDCACHE_LOCK_PROFILE
        print("The managers' lock, by call site (a `-DMANAGEDCACHE_LOCK_PROFILE` build):")
        print("")
        print(ManagerLockProfile.report())
        print("")
        #endif
        print("total time: \(Format.seconds(Stopwatch.seconds(since: start)))")
        return failed ? 1 : 0
    }

    /// Measures and prints how many 16 KiB responses per second the loopback server answers over
    /// six raw keep-alive connections: the ceiling the network scenarios must stay below.
    private func printServerCeiling(_ context: BenchmarkContext) {
        let requests = context.pick(full: 10_000, quick: 3_000)
        do {
            var samples = Samples()
            for _ in 0..<context.pick(full: 3, quick: 1) {
                samples.append(try LoopbackServer.measureCeiling(requests: requests, concurrency: 6, bodySize: 16_384))
            }
            print(
                "loopback server ceiling: \(Format.median(samples) { Format.number($0) }) requests/s "
                    + "(16 KiB bodies, 6 raw keep-alive connections, \(Format.grouped(requests)) requests, "
                    + "median of \(samples.count))")
        } catch {
            print("loopback server ceiling: measurement failed: \(error)")
        }
    }

    /// Progress on standard error, so standard output holds only the report.
    private func log(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
