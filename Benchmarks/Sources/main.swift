import Foundation

// ManagedCache benchmarks: `swift run -c release ManagedCacheBenchmarks [filter] [--quick]`.
// Every figure is a ratio against a baseline measured in the same run (see BENCHMARKS.md).
let options = BenchmarkOptions(arguments: Array(CommandLine.arguments.dropFirst()))
if let childArguments = options.memoryChild {
    exit(MemoryFootprintChild(arguments: childArguments).run())
}
if let childArguments = options.streamingChild {
    exit(StreamingMemoryChild(arguments: childArguments).run())
}
if let childArguments = options.openingChild {
    exit(BigFileCacheOpeningChild(arguments: childArguments).run())
}
if let sides = options.networkSide {
    exit(NetworkThroughputScenario.runSides(sides, quick: options.quick, rounds: options.rounds))
}
let runner = BenchmarkRunner(
    options: options,
    scenarios: [
        CRC32Scenario(),
        MemoryCacheLookupScenario(),
        MemoryCacheInsertScenario(),
        ManageHitScenario(),
        ManageLatencyScenario(),
        CoalescingScenario(),
        NetworkThroughputScenario(),
        FileCacheThroughputScenario(),
        FileCacheHitScenario(),
        FileCacheColdReadScenario(),
        FileCacheWriteScenario(),
        BigFileCacheOpenScenario(),
        FileCacheFirstHitScenario(),
        BigFileCacheOpenMissScenario(),
        BigFileCacheTrimScenario(),
        BigFileCacheMillionScenario(),
        MemoryFootprintScenario(),
        StreamingMemoryScenario(),
        ScrollScenario(),
        RevalidationScenario(),
    ])
exit(runner.run())
