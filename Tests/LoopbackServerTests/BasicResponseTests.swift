import Foundation
import LoopbackServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plain answers: fixed bodies, HEAD, error statuses, handlers, the fallback, and what the
/// server records about each request.
@Suite struct BasicResponseTests {
    @Test func fixedBodyIsServedAndCountedPerPath() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(10_000)
        server.setRoute("/a/b.png", .ok(body, contentType: "image/png"))
        server.setRoute("/other", .ok(Data("x".utf8)))

        for _ in 0..<3 {
            let outcome = await client.fetch(server.url("/a/b.png"))
            #expect(outcome.status == 200)
            #expect(outcome.body == body)
            #expect(outcome.header("Content-Type") == "image/png")
            #expect(outcome.header("Content-Length") == "10000")
        }
        #expect(await client.fetch(server.url("/other?x=1")).body == Data("x".utf8))

        #expect(server.requestCount(for: "/a/b.png") == 3)
        #expect(server.requestCount(for: "/other") == 1)
        #expect(server.requestCount(for: "/other?x=1") == 1)
        #expect(server.requestCount(for: "/missing") == 0)
        #expect(server.totalRequestCount == 4)
        // The server counts a body once its write returns, which can be after the client has read it.
        #expect(await waitUntil { server.bodyBytesSent == 30_001 })
        let recorded = server.recordedRequests(for: "/other")
        #expect(recorded.count == 1)
        #expect(recorded.first?.method == "GET")
        #expect(recorded.first?.query == "x=1")
        #expect(recorded.first?.header("host") == "127.0.0.1:\(server.port)")
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
        #expect(server.url("/a/b.png?x=1").absoluteString == "http://127.0.0.1:\(server.port)/a/b.png?x=1")
        #expect(server.url("/a b").path == "/a b")

        server.resetStatistics()
        #expect(server.totalRequestCount == 0)
        #expect(server.requestCount(for: "/a/b.png") == 0)
        #expect(server.bodyBytesSent == 0)
    }

    @Test func headSendsHeadersWithoutBody() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/file", .ok(testBytes(5_000)).caching(etag: "\"e1\""))

        let outcome = await client.fetch(server.url("/file"), method: "HEAD")
        #expect(outcome.status == 200)
        #expect(outcome.body?.isEmpty == true)
        #expect(outcome.header("Content-Length") == "5000")
        #expect(outcome.header("ETag") == "\"e1\"")
        #expect(server.recordedRequests(for: "/file").map(\.method) == ["HEAD"])
        #expect(server.bodyBytesSent == 0)
        // The connection is still usable after a HEAD.
        #expect(await client.fetch(server.url("/file")).body?.count == 5_000)
    }

    @Test func errorStatusesCarryTheirBodies() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/broken", .status(500, body: Data("boom".utf8)))

        let broken = await client.fetch(server.url("/broken"))
        #expect(broken.status == 500)
        #expect(broken.body == Data("boom".utf8))

        let missing = await client.fetch(server.url("/nowhere"))
        #expect(missing.status == 404)
        #expect(missing.body?.isEmpty == false)
        #expect(server.requestCount(for: "/nowhere") == 1)
    }

    @Test func handlerAnswersEachRequestAndSeesItsHeaders() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setHandler("/echo") { request in
            .ok(Data("\(request.method) \(request.query) \(request.header("X-Test") ?? "-")".utf8))
        }
        let outcome = await client.fetch(server.url("/echo?v=2"), headers: ["x-test": "hello"])
        #expect(outcome.body == Data("GET v=2 hello".utf8))
    }

    @Test func routeWithQueryTakesPrecedenceOverBarePath() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/item", .ok(Data("bare".utf8)))
        server.setRoute("/item?v=2", .ok(Data("two".utf8)))
        #expect(await client.fetch(server.url("/item?v=2")).body == Data("two".utf8))
        #expect(await client.fetch(server.url("/item?v=3")).body == Data("bare".utf8))
        #expect(await client.fetch(server.url("/item")).body == Data("bare".utf8))
        #expect(server.requestCount(for: "/item") == 3)
        #expect(server.recordedRequests(for: "/item?v=3").count == 1)

        server.removeAllRoutes()
        #expect(await client.fetch(server.url("/item")).status == 404)
    }

    @Test func fallbackAnswersGeneratedPathsAndNilGives404() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setFallback { request in
            guard request.path.hasPrefix("/gen/"), let number = Int(request.path.dropFirst(5)) else { return nil }
            return .ok(testBytes(100 + number, seed: number))
        }
        for number in [0, 7, 1_999] {
            #expect(await client.fetch(server.url("/gen/\(number)")).body == testBytes(100 + number, seed: number))
        }
        #expect(await client.fetch(server.url("/elsewhere")).status == 404)
        #expect(server.requestCount(for: "/gen/7") == 1)
    }
}
