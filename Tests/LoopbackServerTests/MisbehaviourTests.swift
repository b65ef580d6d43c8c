import Foundation
import LoopbackServer
import Testing

/// The misbehaviours, one test each, checked by what the client ends up with (a body, or the
/// kind of error); elapsed time is only ever checked as a lower bound, which load cannot break.
@Suite struct MisbehaviourTests {
    @Test func delayedResponseArrivesWhole() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(2_000)
        server.setRoute("/late", .ok(body).behaving(.delayed(seconds: 0.3)))

        let started = Date()
        let outcome = await client.fetch(server.url("/late"))
        #expect(outcome.body == body)
        #expect(Date().timeIntervalSince(started) >= 0.25)
    }

    @Test func stallMakesTheClientTimeOut() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient(timeout: 1)
        defer { client.close() }
        server.setRoute("/stall", .ok(testBytes(10_000)).behaving(.stall(afterBodyBytes: 1_000)))

        let outcome = await client.fetch(server.url("/stall"))
        #expect(outcome.errorCode == .timedOut)
        #expect(await waitUntil { server.bodyBytesSent == 1_000 })
    }

    @Test func truncateWithContentLengthFailsTheRequest() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/cut", .ok(testBytes(10_000)).behaving(.truncate(afterBodyBytes: 4_000, sendContentLength: true)))

        let outcome = await client.fetch(server.url("/cut"))
        // On Linux (libcurl: partial file) the code is .unknown; Apple reports a lost connection.
        #expect(outcome.errorCode != nil)
        #expect(outcome.status == nil)
    }

    @Test func truncateWithoutContentLengthLooksComplete() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(10_000)
        server.setRoute("/cut", .ok(body).behaving(.truncate(afterBodyBytes: 4_000, sendContentLength: false)))

        let outcome = await client.fetch(server.url("/cut"))
        #expect(outcome.status == 200)
        #expect(outcome.body == body.prefix(4_000))
        #expect(outcome.header("Content-Length") == nil)
    }

    @Test func resetMidBodyFailsTheRequest() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/reset", .ok(testBytes(50_000)).behaving(.reset(afterBodyBytes: 5_000)))

        let outcome = await client.fetch(server.url("/reset"))
        // On Linux the code is .networkConnectionLost.
        #expect(outcome.errorCode != nil)
        #expect(outcome.status == nil)
        // The next request on a fresh connection works.
        server.setRoute("/fine", .ok(Data("ok".utf8)))
        #expect(await client.fetch(server.url("/fine")).body == Data("ok".utf8))
    }

    @Test func dripDeliversTheWholeBody() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(3_000)
        server.setRoute("/drip", .ok(body).behaving(.drip(chunkSize: 500, interval: 0.02)))

        let started = Date()
        let outcome = await client.fetch(server.url("/drip"))
        #expect(outcome.body == body)
        // Six chunks, five pauses between them.
        #expect(Date().timeIntervalSince(started) >= 0.09)
        #expect(server.bodyBytesSent == 3_000)
    }

    @Test func latencyAndBandwidthShapeEveryResponse() async throws {
        let server = try LoopbackServer(configuration: .init(latency: 0.1, bytesPerSecond: 200_000))
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(40_000)
        server.setRoute("/shaped", .ok(body))

        var started = Date()
        #expect(await client.fetch(server.url("/shaped")).body == body)
        // 0.1 s latency plus 40,000 bytes at 200,000 B/s (first 20 ms chunk is free).
        #expect(Date().timeIntervalSince(started) >= 0.25)

        server.setLatency(0)
        server.setBandwidth(bytesPerSecond: nil)
        started = Date()
        #expect(await client.fetch(server.url("/shaped")).body == body)
    }
}
