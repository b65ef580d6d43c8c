/// What one memory child measured, as the `memory-result` line it prints and the parent parses.
struct MemoryFootprintResult: Sendable {
    /// Resident memory after warming up, with an empty cache.
    var idleBytes: Int
    /// The high-water mark of resident memory during the workload (restarted at idle).
    var peakBytes: Int
    /// Resident memory at the end.
    var finalBytes: Int
    /// The memory cache's total cost at the end.
    var cachedCost: Int
    /// Entries in the memory cache at the end.
    var cachedCount: Int
    /// Objects decoded during the workload.
    var decodes: Int
    /// How long the workload took.
    var seconds: Double
    /// Whether the kernel restarted the high-water mark at idle (otherwise it covers start-up too).
    var peakWasReset: Bool

    /// How far the peak rose above idle.
    var growthBytes: Int { peakBytes - idleBytes }

    /// `memory-result idle=… peak=… …`.
    var line: String {
        "memory-result idle=\(idleBytes) peak=\(peakBytes) final=\(finalBytes) cost=\(cachedCost) "
            + "count=\(cachedCount) decodes=\(decodes) seconds=\(seconds) reset=\(peakWasReset)"
    }

    /// Parses the line a child printed; `nil` when `output` holds none.
    init?(output: String) {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("memory-result ") }) else { return nil }
        var fields: [String: String] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard let idle = fields["idle"].flatMap({ Int($0) }), let peak = fields["peak"].flatMap({ Int($0) }) else { return nil }
        self.init(
            idleBytes: idle, peakBytes: peak, finalBytes: fields["final"].flatMap { Int($0) } ?? 0,
            cachedCost: fields["cost"].flatMap { Int($0) } ?? 0, cachedCount: fields["count"].flatMap { Int($0) } ?? 0,
            decodes: fields["decodes"].flatMap { Int($0) } ?? 0, seconds: fields["seconds"].flatMap { Double($0) } ?? 0,
            peakWasReset: fields["reset"] == "true")
    }

    /// Creates a result from its fields.
    init(
        idleBytes: Int, peakBytes: Int, finalBytes: Int, cachedCost: Int, cachedCount: Int, decodes: Int,
        seconds: Double, peakWasReset: Bool
    ) {
        self.idleBytes = idleBytes
        self.peakBytes = peakBytes
        self.finalBytes = finalBytes
        self.cachedCost = cachedCost
        self.cachedCount = cachedCount
        self.decodes = decodes
        self.seconds = seconds
        self.peakWasReset = peakWasReset
    }
}
