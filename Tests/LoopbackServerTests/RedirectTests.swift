import Foundation
import LoopbackServer
import Testing

/// Redirects: followed by the client, and a loop that the client gives up on.
@Suite struct RedirectTests {
    @Test func redirectIsFollowedAndBothPathsAreCounted() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/old", .redirect(to: "/new"))
        server.setRoute("/new", .ok(Data("moved here".utf8)))

        let outcome = await client.fetch(server.url("/old"))
        #expect(outcome.status == 200)
        #expect(outcome.body == Data("moved here".utf8))
        #expect(server.requestCount(for: "/old") == 1)
        #expect(server.requestCount(for: "/new") == 1)
    }

    @Test func redirectLoopEndsInAnError() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/loop", .redirect(to: "/loop"))

        let outcome = await client.fetch(server.url("/loop"))
        #expect(outcome.errorCode == .httpTooManyRedirects)
        // The server kept answering 302s until the client gave up.
        #expect(server.requestCount(for: "/loop") > 1)
    }
}
