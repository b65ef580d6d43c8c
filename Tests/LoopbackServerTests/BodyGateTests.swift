import Foundation
import LoopbackServer
import Testing

/// `.gated`: a body sent in pieces, each after the first only when the test releases it.
@Suite struct BodyGateTests {
    @Test func piecesGoOutOnlyWhenReleased() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let gate = BodyGate(breaks: [2_000, 1_000, 5_000])  // unsorted, and one past the end
        server.setRoute("/gated", .ok(body).behaving(.gated(gate)))

        let fetch = Task { await client.fetch(server.url("/gated")) }
        #expect(await waitUntil { gate.piecesSent == 1 })
        #expect(await waitUntil { server.bodyBytesSent == 1_000 })
        gate.release()
        #expect(await waitUntil { gate.piecesSent == 2 })
        #expect(await waitUntil { server.bodyBytesSent == 2_000 })
        gate.releaseAll()
        #expect(await fetch.value.body == body)
        #expect(gate.piecesSent == 3)
    }

    @Test func gatesAreEqualOnlyToThemselves() {
        let gate = BodyGate(breaks: [1])
        #expect(LoopbackResponse.Behavior.gated(gate) == .gated(gate))
        #expect(LoopbackResponse.Behavior.gated(gate) != .gated(BodyGate(breaks: [1])))
    }
}
