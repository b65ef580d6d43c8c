// A child process for the busy-pool delivery test (Linux):
//
//     BusyPoolChild <url of a dripping body>
//
// It starts downloading the body with a `URLSessionDataLoader`, then makes every thread of
// Swift's cooperative pool compute without suspending, and counts the chunks delivered while
// the pool stays full. A probe queued on dispatch's default-QoS pool (on Linux, the cooperative
// pool's threads) marks the end of that: it runs only once dispatch gives the pool a thread
// again, which it does after some seconds. It prints `delivered-while-full <count>` and exits.
//
// A process of its own: in the test process, other tests block pool threads and dispatch adds
// threads for them, so a spinner per core no longer fills the pool.

import Foundation
import ManagedCache
import ManagedCacheLocking

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Polls `condition` every 2 ms for at most `seconds`; returns whether it held.
func waitUntil(seconds: Double = 60, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// Counts the chunks a load delivers.
final class ChunkCounter: DataLoadReceiver {
    private let count = Lock(0)
    var chunks: Int { count.withLock { $0 } }
    func didReceive(response: DataLoadResponse) throws {}
    func didReceive(_ chunk: Data) throws { count.withLock { $0 += 1 } }
}

guard CommandLine.arguments.count == 2, let url = URL(string: CommandLine.arguments[1]) else {
    say("usage: BusyPoolChild <url>")
    exit(2)
}
let loader = URLSessionDataLoader()
let receiver = ChunkCounter()
// Started while the pool is free; the process exits before the body ends.
Task.detached { _ = try? await loader.load(DataLoadRequest(url: url, timeout: 300), receiver: receiver) }
guard waitUntil({ receiver.chunks > 0 }) else {
    say("no chunk arrived")
    exit(1)
}

// Every pool thread spins until told to stop (or for a minute at most).
let spinnerCount = ProcessInfo.processInfo.activeProcessorCount
let spinning = Lock(0)
let stop = Lock(false)
for _ in 0..<spinnerCount {
    Task.detached(priority: .medium) {
        spinning.withLock { $0 += 1 }
        let deadline = Date().addingTimeInterval(60)
        while !stop.withLock({ $0 }), Date() < deadline {}
    }
}
guard waitUntil({ spinning.withLock { $0 } == spinnerCount }) else {
    say("the spinners did not all start")
    exit(1)
}

let before = receiver.chunks
let chunksWhenAPoolThreadWasFree = Lock<Int?>(nil)
DispatchQueue.global().async { chunksWhenAPoolThreadWasFree.withLock { $0 = receiver.chunks } }
_ = waitUntil { receiver.chunks >= before + 5 || chunksWhenAPoolThreadWasFree.withLock { $0 } != nil }
let delivered = min(receiver.chunks, chunksWhenAPoolThreadWasFree.withLock { $0 } ?? .max) - before
stop.withLock { $0 = true }
say("delivered-while-full \(delivered)")
exit(0)
