import Foundation
import HeapProbe
import ManagedCache

/// `BigFileCache` at two sizes side by side (100,000 and 1,000,000 entries of 256 bytes; 10,000
/// and 100,000 with `--quick`), on tmpfs: what an entry costs in memory, how long the opening
/// takes to complete (cleanly closed, and after a crash), how long misses wait while it runs, what
/// a store and a trim pass cost, and how a limit lowered since the last use is reached. Each
/// row gives the small size as the baseline and the ratio large / small; the targets are those
/// of the large size.
struct BigFileCacheMillionScenario: BenchmarkScenario {
    let identifier = "big-file-cache-million"
    let usesNetwork = false

    /// What one size measured.
    private struct Figures {
        var count = 0
        /// C heap in use after the opening completed, less before it, per entry.
        var heapBytesPerEntry = 0.0
        /// A fresh process's resident memory once the opening completed, less the same process
        /// with an empty cache, per entry.
        var residentBytesPerEntry = 0.0
        var openSeconds = 0.0
        var crashOpenSeconds = 0.0
        var storeSeconds = 0.0
        /// How long the fill waited for the kernel's deferred frees (`settleDeferredFrees`), or
        /// nil where it could not ask.
        var settleSeconds: Double?
        var storesOver10ms = 0
        var slowestStoreSeconds = 0.0
        /// What the stores over 10 ms while filling were (see `SlowCall`).
        var slowStores: [SlowCall] = []
        var closeSeconds = 0.0
        var trimSecondsPerFile = 0.0
        var trimStoreSeconds = 0.0
        var trimStoreSlowestSeconds = 0.0
        /// Files deleted by the `trimPasses` passes.
        var trimRemoved = 0
        /// A plain `unlink` of as many files from the same directories, per file.
        var unlinkSecondsPerFile = 0.0
        /// Reopened with a byte limit a tenth lower: until `statistics` answers, and until the
        /// limit is reached and the files it evicts are deleted (the directory's own count).
        var lowerLimitStatisticsSeconds = 0.0
        var lowerLimitDeletedSeconds = 0.0
        /// The slowest of the stores made from then until the limit is reached.
        var lowerLimitSlowestStoreSeconds = 0.0
        var lowerLimitStores = 0
        /// From the start of the opening: until `init` returns, and until a first hit has
        /// returned its entry (before the index is complete).
        var initSeconds = 0.0
        var firstHitSeconds = 0.0
        /// Misses asked for while the opening runs, from `init` on: median and slowest.
        var openingMissMedianSeconds = 0.0
        var openingMissSlowestSeconds = 0.0
        var openingMisses = 0
        /// What the misses over 1 ms were, one `SlowCall` each: whether the thread blocked,
        /// waited for a processor, or had its time taken outside the system (see `classify`).
        var slowOpeningMisses: [SlowCall] = []
    }

    /// Where the wall time of one slow call (a miss over 1 ms, a store over 10 ms) went, from the
    /// thread's own accounts before and after it (`ThreadAccount`).
    struct SlowCall {
        enum Kind: String, CaseIterable {
            /// The thread gave the processor up (a lock, a read): the miss waited for something.
            case blocked = "blocked"
            /// The scheduler preempted it: it waited for a processor while other threads ran.
            case preempted = "preempted by the scheduler"
            /// Neither ran nor waited, as the kernel counts: time the virtual machine's host kept
            /// from this system (its processor stolen, or its memory being backed).
            case lostToTheHost = "time lost outside the system"
            /// Ran on the processor for most of it.
            case running = "running"
        }
        var kind: Kind
        var seconds: Double
        /// Of `seconds`: on the processor, and waiting in the run queue (`schedstat`).
        var runSeconds: Double
        var queuedSeconds: Double
        var minorFaults: Int
    }

    /// `SlowCall` from the two accounts around a call of `seconds`.
    static func classify(seconds: Double, before: ThreadAccount, after: ThreadAccount) -> SlowCall {
        let run = Double(after.runNanoseconds - before.runNanoseconds) / 1e9
        let queued = Double(after.queuedNanoseconds - before.queuedNanoseconds) / 1e9
        let kind: SlowCall.Kind
        if after.voluntarySwitches > before.voluntarySwitches {
            kind = .blocked
        } else if after.involuntarySwitches > before.involuntarySwitches || queued > seconds / 4 {
            kind = .preempted
        } else if run < seconds / 2 {
            kind = .lostToTheHost
        } else {
            kind = .running
        }
        return SlowCall(
            kind: kind, seconds: seconds, runSeconds: run, queuedSeconds: queued,
            minorFaults: after.minorFaults - before.minorFaults)
    }

    /// One line on the slow calls of a run: how many of each kind, and the slowest of each.
    static func describe(_ calls: [SlowCall], over threshold: String = "1 ms", at size: String) -> String {
        guard !calls.isEmpty else { return "over \(threshold) at \(size): none" }
        let kinds = SlowCall.Kind.allCases.compactMap { kind -> String? in
            let ofKind = calls.filter { $0.kind == kind }
            guard let slowest = ofKind.max(by: { $0.seconds < $1.seconds }) else { return nil }
            return "\(ofKind.count) \(kind.rawValue) (the slowest \(micro(slowest.seconds)): "
                + "\(micro(slowest.runSeconds)) on the processor, \(micro(slowest.queuedSeconds)) "
                + "queued, \(slowest.minorFaults) page faults)"
        }
        return "over \(threshold) at \(size): " + kinds.joined(separator: ", ")
    }

    /// The calling thread's own accounts so far: its context switches and page faults
    /// (`getrusage(RUSAGE_THREAD)`), its time on the processor (`CLOCK_THREAD_CPUTIME_ID`, exact
    /// to the call, and without the time the host stole: the kernel counts steal apart) and its
    /// time waiting in the run queue (`/proc/thread-self/schedstat`'s second field, brought up to
    /// date each time the thread is switched in; read through `schedstat`, which the caller opens
    /// once). Linux only; zeros elsewhere.
    struct ThreadAccount {
        var voluntarySwitches = 0
        var involuntarySwitches = 0
        var minorFaults = 0
        var runNanoseconds: Int64 = 0
        var queuedNanoseconds: Int64 = 0

        static func now(schedstat: Int32) -> ThreadAccount {
            var account = ThreadAccount()
            #if os(Linux)
            var usage = rusage()
            // RUSAGE_THREAD (1): glibc declares its name only under _GNU_SOURCE, which the Glibc
            // module does not define.
            if getrusage(__rusage_who_t(1), &usage) == 0 {
                account.voluntarySwitches = usage.ru_nvcsw
                account.involuntarySwitches = usage.ru_nivcsw
                account.minorFaults = usage.ru_minflt
            }
            if schedstat >= 0 {
                // On the stack, parsed in place: sampled around every store of a million, so no
                // allocation of its own beside the heap being measured.
                account.queuedNanoseconds = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { buffer in
                    let count = pread(schedstat, buffer.baseAddress, buffer.count, 0)
                    // "<on the processor> <in the run queue> <time slices>": the second number.
                    var field = 0
                    var value: Int64 = 0
                    for byte in buffer.prefix(max(count, 0)) {
                        if byte == UInt8(ascii: " ") {
                            if field == 1 { break }
                            field += 1
                        } else if field == 1, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                        }
                    }
                    return value
                }
            }
            var cpu = timespec()
            if clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0 {
                account.runNanoseconds = Int64(cpu.tv_sec) * 1_000_000_000 + Int64(cpu.tv_nsec)
            }
            #endif
            return account
        }
    }

    /// The calling thread's `schedstat` file, opened for `ThreadAccount.now(schedstat:)` (-1 where
    /// there is none).
    static func openSchedstat() -> Int32 {
        #if os(Linux)
        return open("/proc/thread-self/schedstat", O_RDONLY)  // portability-lint: allow Linux only
        #else
        return -1
        #endif
    }

    /// Seconds written in microseconds, as the rows and notes give short times.
    static func micro(_ seconds: Double) -> String { "\(Format.number(seconds * 1e6)) µs" }

    /// How many trim passes the per-file row times: two rounds of the ten slices.
    private static let trimPasses = 20

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        let sizes = context.pick(full: (100_000, 1_000_000), quick: (10_000, 100_000))
        let small = try measure(count: sizes.0)
        let large = try measure(count: sizes.1)
        let names = (Format.grouped(small.count), Format.grouped(large.count))
        func row(
            _ scenario: String, _ pick: (Figures) -> Double, write: (Double) -> String, target: String, met: Bool?,
            notes: [String] = []
        ) -> ResultRow {
            let ratio = pick(small) > 0 ? pick(large) / pick(small) : 0
            return ResultRow(
                scenario: "\(scenario), \(names.1) entries", ours: write(pick(large)),
                baseline: "\(names.0) entries: \(write(pick(small)))", ratio: Format.ratio(ratio), target: target, met: met,
                notes: notes)
        }
        let perEntry: (Double) -> String = { "\(Format.number($0)) B" }
        let micro = Self.micro
        return [
            row(
                "index memory an entry (a fresh process's resident memory once opened, less the same with an empty cache)",
                { $0.residentBytesPerEntry }, write: perEntry,
                target: "≤ 64 B at 1M", met: large.count < 1_000_000 ? nil : large.residentBytesPerEntry <= 64,
                notes: [
                    "C heap in use after the opening, less before, in this process: \(perEntry(small.heapBytesPerEntry)) at "
                        + "\(names.0), \(perEntry(large.heapBytesPerEntry)) at \(names.1)"
                ]),
            row(
                "opening until `statistics` is complete", { $0.openSeconds }, write: Format.seconds, target: "≤ 1 s at 1M",
                met: large.count < 1_000_000 ? nil : large.openSeconds <= 1),
            row(
                "opening after a crash until complete", { $0.crashOpenSeconds }, write: Format.seconds, target: "≤ 2 s at 1M",
                met: large.count < 1_000_000 ? nil : large.crashOpenSeconds <= 2),
            row(
                "a store while filling (mean)", { $0.storeSeconds }, write: micro, target: "≤ 1.5×",
                met: large.storeSeconds <= 1.5 * small.storeSeconds,
                notes: [
                    "stores over 10 ms while filling: \(small.storesOver10ms) at \(names.0), \(large.storesOver10ms) at \(names.1); "
                        + "the slowest: \(Format.seconds(small.slowestStoreSeconds)) at \(names.0), "
                        + "\(Format.seconds(large.slowestStoreSeconds)) at \(names.1)",
                    Self.describe(small.slowStores, over: "10 ms", at: names.0),
                    Self.describe(large.slowStores, over: "10 ms", at: names.1),
                    "before each fill, the kernel's deferred frees (the previous size's deleted files) run to the end: "
                        + [small, large].map { $0.settleSeconds.map(Format.seconds) ?? "not asked (root only)" }
                        .joined(separator: " and "),
                ]),
            row("closing after the fill", { $0.closeSeconds }, write: Format.seconds, target: "—", met: nil),
            row(
                "the first hit, from the start of the opening", { $0.firstHitSeconds }, write: micro, target: "a few ms",
                met: large.firstHitSeconds <= 0.005,
                notes: [
                    "`init` returned after \(micro(small.initSeconds)) at \(names.0), \(micro(large.initSeconds)) at \(names.1)"
                ]),
            row(
                "misses while opening: the slowest", { $0.openingMissSlowestSeconds }, write: micro, target: "≤ 1 ms",
                met: large.openingMissSlowestSeconds <= 0.001,
                notes: [
                    "median: \(micro(small.openingMissMedianSeconds)) at \(names.0), \(micro(large.openingMissMedianSeconds)) at "
                        + "\(names.1), of \(Format.grouped(small.openingMisses)) and \(Format.grouped(large.openingMisses)) misses "
                        + "asked for, one after another, until the opening completed",
                    Self.describe(small.slowOpeningMisses, at: names.0),
                    Self.describe(large.slowOpeningMisses, at: names.1),
                ]),
            row(
                "reopened with a byte limit 10 % lower: until `statistics` answers", { $0.lowerLimitStatisticsSeconds },
                write: Format.seconds, target: "≤ 1 s at 1M, as any opening",
                met: large.count < 1_000_000 ? nil : large.lowerLimitStatisticsSeconds <= 1,
                notes: [
                    "until the limit is reached and its evictions are deleted from the directory: "
                        + "\(Format.seconds(small.lowerLimitDeletedSeconds)) at \(names.0), "
                        + "\(Format.seconds(large.lowerLimitDeletedSeconds)) at \(names.1)"
                ]),
            row(
                "reopened with a byte limit 10 % lower: the slowest store until the limit is reached",
                { $0.lowerLimitSlowestStoreSeconds }, write: Format.seconds, target: "≤ 10 ms",
                met: large.lowerLimitSlowestStoreSeconds <= 0.010,
                notes: [
                    "stores made meanwhile, one after another: \(Format.grouped(small.lowerLimitStores)) at \(names.0), "
                        + "\(Format.grouped(large.lowerLimitStores)) at \(names.1)"
                ]),
            row(
                "the store whose commit starts a trim pass (cache at its byte limit)", { $0.trimStoreSeconds }, write: Format.seconds,
                target: "≤ 10 ms", met: large.trimStoreSlowestSeconds <= 0.010,
                notes: [
                    "the slowest of the \(Self.trimPasses) such stores: \(Format.seconds(small.trimStoreSlowestSeconds)) at "
                        + "\(names.0), \(Format.seconds(large.trimStoreSlowestSeconds)) at \(names.1)"
                ]),
            row(
                "trim passes: time per deleted file", { $0.trimSecondsPerFile }, write: micro,
                target: "≤ 2×", met: large.trimSecondsPerFile <= 2 * small.trimSecondsPerFile,
                notes: [
                    "files \(Self.trimPasses) passes deleted: \(Format.grouped(small.trimRemoved)) at \(names.0), "
                        + "\(Format.grouped(large.trimRemoved)) at \(names.1); all on tmpfs, entries of 256 bytes",
                    "a plain `unlink` of as many files of the same directories, afterwards: "
                        + "\(micro(small.unlinkSecondsPerFile)) at \(names.0), \(micro(large.unlinkSecondsPerFile)) at \(names.1) a file "
                        + "(the pass: \(Format.ratio(small.trimSecondsPerFile / max(small.unlinkSecondsPerFile, 1e-9)))"
                        + " and \(Format.ratio(large.trimSecondsPerFile / max(large.unlinkSecondsPerFile, 1e-9))) that)",
                ]),
        ]
    }

    /// How many files the bucket directories under `ready` hold.
    private func directoryFileCount(_ ready: String) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: ready).reduce(0) { total, bucket in
            total + (try FileManager.default.contentsOfDirectory(atPath: ready + "/" + bucket).count)
        }
    }

    /// Waits until the kernel has run the frees it deferred (RCU callbacks), as far as this
    /// process may ask. Deleting a directory of 100,000 files (the smaller size's scratch
    /// directory, deleted just before the larger fill) leaves that many inodes and dentries to
    /// free after a grace period. The kernel frees them in the timer interrupt, up to 3 ms
    /// (`rcu_resched_ns`) every 4 ms tick, and charges that time to whatever thread the tick
    /// interrupts: `perf record -a -g` showed the fill's stores of 2–6 ms, all in the first
    /// thousand, spent in `rcu_do_batch` under `sysvec_apic_timer_interrupt`, freeing inodes.
    /// Writing to `rcutree`'s `do_rcu_barrier` (root only) returns once every callback queued so
    /// far has run; elsewhere the fill starts at once. Returns whether it could ask.
    static func settleDeferredFrees() -> Bool {
        #if os(Linux)
        // portability-lint: allow Linux only: the kernel's RCU, through its module parameter
        let barrier = open("/sys/module/rcutree/parameters/do_rcu_barrier", O_WRONLY)
        guard barrier >= 0 else { return false }
        defer { close(barrier) }
        return write(barrier, "1", 1) == 1
        #else
        return false
        #endif
    }

    /// Fills a cache of `count` entries and measures it.
    private func measure(count: Int) throws -> Figures {
        var figures = Figures()
        figures.count = count
        let settleStart = Stopwatch.now()
        if Self.settleDeferredFrees() { figures.settleSeconds = Stopwatch.seconds(since: settleStart) }
        let scratch = try ScratchDirectory(prefix: "million", inMemory: true)
        let directory = scratch.appending("cache")
        let body = Data(repeating: 0x5A, count: 256)
        do {
            let cache = try BigFileCache(directory: directory)
            let schedstat = Self.openSchedstat()
            defer { if schedstat >= 0 { close(schedstat) } }
            var storing = 0.0
            for index in 0..<count {
                // The thread's accounts before each store, outside the timed part: a store over
                // 10 ms is told apart as a slow miss is (`classify`).
                let before = ThreadAccount.now(schedstat: schedstat)
                let storeStart = Stopwatch.now()
                try cache.store(body, forKey: FileCacheFixture.key(index))
                let seconds = Stopwatch.seconds(since: storeStart)
                storing += seconds
                if seconds > 0.010 {
                    figures.storesOver10ms += 1
                    figures.slowStores.append(
                        Self.classify(seconds: seconds, before: before, after: ThreadAccount.now(schedstat: schedstat)))
                }
                figures.slowestStoreSeconds = max(figures.slowestStoreSeconds, seconds)
            }
            figures.storeSeconds = storing / Double(count)
            let closeStart = Stopwatch.now()
            cache.close()
            figures.closeSeconds = Stopwatch.seconds(since: closeStart)
        }
        // A first hit, then misses while a clean opening runs: absent keys asked for until the
        // opening completes.
        do {
            let start = Stopwatch.now()
            let cache = try BigFileCache(directory: directory)
            figures.initSeconds = Stopwatch.seconds(since: start)
            guard cache.entry(forKey: FileCacheFixture.key(count / 2)) != nil else { throw BenchmarkFailure("the first hit missed") }
            figures.firstHitSeconds = Stopwatch.seconds(since: start)
            var misses: [Double] = []
            var index = 0
            // The thread's run-queue accounts, opened once: read before and after every miss,
            // outside the timed part.
            let schedstat = Self.openSchedstat()
            defer { if schedstat >= 0 { close(schedstat) } }
            while cache.isOpening || misses.isEmpty {
                let key = "absent-\(index)"
                let before = ThreadAccount.now(schedstat: schedstat)
                let start = Stopwatch.now()
                _ = cache.entry(forKey: key)
                let seconds = Stopwatch.seconds(since: start)
                misses.append(seconds)
                if seconds > 0.001 {
                    // Where the time went: the replay thread and this one share two cores with
                    // the rest of the machine, itself a virtual machine's.
                    figures.slowOpeningMisses.append(
                        Self.classify(seconds: seconds, before: before, after: ThreadAccount.now(schedstat: schedstat)))
                }
                index += 1
            }
            misses.sort()
            figures.openingMisses = misses.count
            figures.openingMissMedianSeconds = misses[misses.count / 2]
            figures.openingMissSlowestSeconds = misses[misses.count - 1]
            cache.close()
        }
        do {
            let heapBefore = heap_probe_bytes_in_use()
            let start = Stopwatch.now()
            let cache = try BigFileCache(directory: directory)
            guard cache.statistics.count == count else { throw BenchmarkFailure("opened with \(cache.statistics.count) of \(count)") }
            figures.openSeconds = Stopwatch.seconds(since: start)
            figures.heapBytesPerEntry = Double(heap_probe_bytes_in_use() - heapBefore) / Double(count)
            cache.close()
        }
        // Resident memory, as an app that opens the cache would see it: a fresh process on the
        // filled cache, less one on an empty cache.
        do {
            let empty = try BigFileCacheOpeningChild.measure(scratch.appending("empty"))
            let filled = try BigFileCacheOpeningChild.measure(directory)
            guard filled.count == count else { throw BenchmarkFailure("the child opened \(filled.count) of \(count)") }
            figures.residentBytesPerEntry = Double(filled.resident - empty.resident) / Double(count)
        }
        // A crash: a session file whose process is gone (an earlier version's name; no lock held).
        let sessions = directory.appendingPathComponent("sessions")
        guard FileManager.default.createFile(atPath: sessions.appendingPathComponent("999999-crashed").path, contents: Data()) else {
            throw BenchmarkFailure("cannot leave a crashed session file in \(sessions.path)")
        }
        do {
            let start = Stopwatch.now()
            let cache = try BigFileCache(directory: directory)
            guard cache.statistics.count == count else { throw BenchmarkFailure("reopened with \(cache.statistics.count) of \(count)") }
            figures.crashOpenSeconds = Stopwatch.seconds(since: start)
            cache.close()
        }
        // Commits that put the cache over its byte limit start trim passes: the first such store's
        // time, and the time per deleted file over `trimPasses` passes (one pass deletes 64
        // files in under a millisecond: timed alone, it varied by a third from run to run).
        do {
            let cache = try BigFileCache(directory: directory, configuration: .init(byteLimit: count * 256))
            _ = cache.statistics
            var passesSeconds = 0.0
            var passes = 0
            var stored = 0
            while passes < Self.trimPasses {
                guard stored < 1_000 * Self.trimPasses else { throw BenchmarkFailure("\(stored) stores started \(passes) trim passes") }
                let before = cache.statistics.count
                let start = Stopwatch.now()
                try cache.store(body, forKey: FileCacheFixture.key(2 * count + stored))
                let seconds = Stopwatch.seconds(since: start)
                stored += 1
                let removed = before + 1 - cache.statistics.count
                guard removed > 0 else { continue }  // under the limit: no pass
                if passes == 0 { figures.trimStoreSeconds = seconds }
                figures.trimStoreSlowestSeconds = max(figures.trimStoreSlowestSeconds, seconds)
                passes += 1
                passesSeconds += seconds
                figures.trimRemoved += removed
            }
            figures.trimSecondsPerFile = passesSeconds / Double(figures.trimRemoved)
            cache.close()
        }
        // Reopened with a byte limit a tenth lower: the opening has a tenth of the entries to evict.
        do {
            let limit = count * 256 * 9 / 10
            let start = Stopwatch.now()
            let cache = try BigFileCache(directory: directory, configuration: .init(byteLimit: limit))
            let statistics = cache.statistics
            figures.lowerLimitStatisticsSeconds = Stopwatch.seconds(since: start)
            guard statistics.count >= count * 9 / 10 else {
                throw BenchmarkFailure("reopened with \(statistics.count) of \(count) entries")
            }
            // Stores, one after another, until the limit is reached; then the directory's files.
            var stores = 0
            while cache.statistics.totalBytes > limit {
                let storeStart = Stopwatch.now()
                try cache.store(body, forKey: FileCacheFixture.key(count + 1 + stores))
                figures.lowerLimitSlowestStoreSeconds = max(figures.lowerLimitSlowestStoreSeconds, Stopwatch.seconds(since: storeStart))
                stores += 1
            }
            figures.lowerLimitStores = stores
            let ready = directory.appendingPathComponent("ready").path
            while try directoryFileCount(ready) > cache.statistics.count { usleep(1_000) }
            figures.lowerLimitDeletedSeconds = Stopwatch.seconds(since: start)
            cache.close()
        }
        // The baseline of the trim passes' deletions: as many files unlinked from the same
        // buckets (the passes went twice round all of them), the cache closed (the scratch
        // directory goes next).
        let ready = directory.appendingPathComponent("ready").path
        var victims: [String] = []
        let perBucket = (figures.trimRemoved + 255) / 256
        for bucket in 0..<256 where victims.count < max(figures.trimRemoved, 1) {
            let names = try FileManager.default.contentsOfDirectory(atPath: ready + "/" + String(format: "%02x", bucket))
            victims += names.prefix(perBucket).map { ready + "/" + String(format: "%02x", bucket) + "/" + $0 }
        }
        victims = Array(victims.prefix(max(figures.trimRemoved, 1)))
        let unlinkStart = Stopwatch.now()
        for path in victims { unlink(path) }
        figures.unlinkSecondsPerFile = Stopwatch.seconds(since: unlinkStart) / Double(victims.count)
        return figures
    }
}
