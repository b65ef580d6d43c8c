import Foundation
import LoopbackServer
import StreamingPayload
import TestSupport
import Testing

/// A 200 MiB download from the loopback server at full speed, into a
/// `FileCache` or without one (the decoder wants a file URL: the body goes to a temporary file),
/// keeps the downloading process's peak resident memory below 64 MiB above its baseline, and the
/// file holds exactly the body. A child process (`StreamingMemoryChild`) downloads and measures
/// its own memory (`/proc/self/status`, Linux), so nothing of this process, the server's 200 MiB
/// body least of all, counts. Without back-pressure FoundationNetworking queues every chunk the
/// disk has not taken yet: 201 MiB above baseline with a file cache, measured before the back-pressure.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct StreamingMemoryTests {
    static let blocks = 200
    static let limit = 64 << 20

    #if os(Linux)
    @Test(arguments: ["cache", "nocache"]) func aLargeDownloadIsNeverHeldInMemory(mode: String) throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = StreamingPayload.body(blockCount: Self.blocks)
        server.setRoute("/big", .ok(body))
        server.setRoute("/big/warm-up", .ok(StreamingPayload.block(0)))
        let directory = TemporaryDirectory(prefix: "streaming-memory")
        let child = try runChild(
            named: "StreamingMemoryChild", arguments: [server.url("/big").absoluteString, "\(Self.blocks)", mode, directory.url.path],
            // The temporary file of a download without a file cache goes where the test cleans up.
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": directory.url.path]) { $1 }, timeout: 300)
        let lines = child.lines
        #expect(child.ended, "the child hung: \(lines)")
        #expect(child.terminationReason == .exit, "the child crashed (signal \(child.terminationStatus)): \(lines)")
        #expect(child.terminationStatus == 0, "\(lines)")
        #expect(child.value("content")?.hasPrefix("ok") == true, "\(lines)")
        let growth = try #require(child.value("peak-growth").flatMap { Int($0) }, "\(lines)")
        #expect(growth < Self.limit, "peak resident memory \(growth >> 20) MiB above the baseline: \(lines)")
        print("streaming memory (\(mode)): " + lines.joined(separator: "; "))
    }
    #endif
}
