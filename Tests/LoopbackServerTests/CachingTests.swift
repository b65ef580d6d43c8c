import Foundation
import LoopbackServer
import Testing

/// HTTP caching support: conditional requests (304) and byte ranges (206, If-Range).
@Suite struct CachingTests {
    private static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    @Test func ifNoneMatchWithTheCurrentETagGives304() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(1_000)
        server.setRoute("/v", .ok(body).caching(etag: "\"v1\"", cacheControl: "max-age=60"))

        for candidates in ["\"v1\"", "W/\"v1\"", "\"other\", \"v1\"", "*"] {
            let outcome = await client.fetch(server.url("/v"), headers: ["If-None-Match": candidates])
            #expect(outcome.status == 304, "If-None-Match: \(candidates)")
            #expect(outcome.body?.isEmpty == true)
            #expect(outcome.header("ETag") == "\"v1\"")
            #expect(outcome.header("Cache-Control") == "max-age=60")
        }
        let changed = await client.fetch(server.url("/v"), headers: ["If-None-Match": "\"v0\""])
        #expect(changed.status == 200)
        #expect(changed.body == body)
        #expect(server.recordedRequests(for: "/v").last?.header("if-none-match") == "\"v0\"")
    }

    @Test func headBytesCountWhatA304Costs() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        server.setRoute("/v", .ok(testBytes(5_000)).caching(etag: "\"v1\""))
        _ = await client.fetch(server.url("/v"))
        // The server counts after its send returns, which may be after the client has the bytes.
        #expect(await waitUntil { server.bodyBytesSent == 5_000 })
        let headOf200 = server.headBytesSent
        #expect(headOf200 > 30 && headOf200 < 1_000)
        server.resetStatistics()
        #expect(server.headBytesSent == 0)
        let notModified = await client.fetch(server.url("/v"), headers: ["If-None-Match": "\"v1\""])
        #expect(notModified.status == 304)
        #expect(await waitUntil { server.headBytesSent > 30 })
        #expect(server.headBytesSent < 1_000)
        #expect(server.bodyBytesSent == 0)
    }

    @Test func ifModifiedSinceTheLastModifiedDateGives304() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(1_000)
        server.setRoute("/d", .ok(body).caching(lastModified: Self.lastModified))

        let same = await client.fetch(server.url("/d"), headers: ["If-Modified-Since": Self.lastModified])
        #expect(same.status == 304)
        #expect(same.body?.isEmpty == true)
        #expect(same.header("Last-Modified") == Self.lastModified)

        let older = await client.fetch(server.url("/d"), headers: ["If-Modified-Since": "Tue, 20 Oct 2015 07:28:00 GMT"])
        #expect(older.status == 200)
        #expect(older.body == body)
    }

    @Test func rangeGives206WithTheRequestedBytes() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(1_000)
        server.setRoute("/r", .ok(body))

        let middle = await client.fetch(server.url("/r"), headers: ["Range": "bytes=10-19"])
        #expect(middle.status == 206)
        #expect(middle.body == body[10..<20])
        #expect(middle.header("Content-Range") == "bytes 10-19/1000")
        #expect(middle.header("Accept-Ranges") == "bytes")
        #expect(middle.header("Content-Length") == "10")

        let tail = await client.fetch(server.url("/r"), headers: ["Range": "bytes=990-"])
        #expect(tail.status == 206)
        #expect(tail.body == body[990...])
        #expect(tail.header("Content-Range") == "bytes 990-999/1000")

        let suffix = await client.fetch(server.url("/r"), headers: ["Range": "bytes=-5"])
        #expect(suffix.body == body.suffix(5))

        let beyond = await client.fetch(server.url("/r"), headers: ["Range": "bytes=5000-"])
        #expect(beyond.status == 416)
        #expect(beyond.header("Content-Range") == "bytes */1000")
        #expect(await waitUntil { server.bodyBytesSent == 10 + 10 + 5 })
    }

    @Test func ifRangeWithAChangedETagGivesTheFullBody() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(1_000)
        server.setRoute("/r", .ok(body).caching(etag: "\"v2\"", lastModified: Self.lastModified))

        let changed = await client.fetch(server.url("/r"), headers: ["Range": "bytes=100-", "If-Range": "\"v1\""])
        #expect(changed.status == 200)
        #expect(changed.body == body)

        let same = await client.fetch(server.url("/r"), headers: ["Range": "bytes=100-", "If-Range": "\"v2\""])
        #expect(same.status == 206)
        #expect(same.body == body[100...])

        let sameDate = await client.fetch(server.url("/r"), headers: ["Range": "bytes=100-", "If-Range": Self.lastModified])
        #expect(sameDate.status == 206)
    }

    @Test func rangeIsIgnoredWhenRangesAreNotSupported() async throws {
        let server = try LoopbackServer()
        let client = HTTPClient()
        defer { client.close() }
        let body = testBytes(1_000)
        var response = LoopbackResponse.ok(body)
        response.supportsRanges = false
        server.setRoute("/r", response)

        let outcome = await client.fetch(server.url("/r"), headers: ["Range": "bytes=10-19"])
        #expect(outcome.status == 200)
        #expect(outcome.body == body)
        #expect(outcome.header("Accept-Ranges") == nil)
    }
}
