/// What the command line asked for: `ManagedCacheBenchmarks [filter] [--quick]`, or the memory
/// scenario's child mode (`--memory-child key=value ...`, run by the benchmark itself).
struct BenchmarkOptions: Sendable {
    /// Fewer repetitions and smaller workloads, for a quick look (the targets still apply).
    var quick = false
    /// Only scenarios whose identifier contains this text run; `nil` runs them all.
    var filter: String?
    /// Set when this process is the memory scenario's child: its `key=value` arguments.
    var memoryChild: [String: String]?
    /// Set when this process is the streaming scenario's child: its `key=value` arguments.
    var streamingChild: [String: String]?
    /// Set when this process is the million-entry scenario's opening child: its `key=value` arguments.
    var openingChild: [String: String]?
    /// Set by `--network-side NAMES`: run only those sides of the `network` scenario (names
    /// separated by commas), for a profiler or a closer comparison, instead of the scenarios.
    var networkSide: String?
    /// `--rounds N`: the measured rounds of `--network-side` (default 1).
    var rounds = 1
    /// `--help` was given.
    var wantsHelp = false

    /// Parses `arguments` (without the program name).
    init(arguments: [String]) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick":
                quick = true
            case "--help", "-h":
                wantsHelp = true
            case "--network-side":
                networkSide = remaining.popFirst() ?? ""
            case "--rounds":
                rounds = max(1, remaining.popFirst().flatMap { Int($0) } ?? 1)
            case MemoryFootprintChild.flag, StreamingMemoryChild.flag, BigFileCacheOpeningChild.flag:
                var values: [String: String] = [:]
                for pair in remaining {
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    if parts.count == 2 { values[parts[0]] = parts[1] }
                }
                switch argument {
                case MemoryFootprintChild.flag: memoryChild = values
                case StreamingMemoryChild.flag: streamingChild = values
                default: openingChild = values
                }
                return
            default:
                filter = argument.lowercased()
            }
        }
    }

    /// The usage text.
    static let usage = """
        usage: swift run -c release ManagedCacheBenchmarks [filter] [--quick]
          filter   run only scenarios whose identifier contains it (e.g. memory-cache, network, scroll)
          --quick  fewer repetitions and smaller workloads
          --network-side SIDES  run only these sides of `network` (manager, session, loader,
                   streaming; comma-separated) after one warm-up round, for a profiler
          --rounds N  measured rounds of --network-side (default 1)
        """
}
