import Foundation
import LoopbackServer
import Testing

/// HTTP framing details URLSession never exercises, over a raw socket.
@Suite struct RawProtocolTests {
    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try LoopbackServer()
        server.setRoute("/one", .ok(Data("first".utf8), contentType: "text/plain"))
        server.setRoute("/two", .ok(Data("second".utf8), contentType: "text/plain"))
        let connection = try #require(RawConnection(port: server.port))
        connection.send(
            "GET /one HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                + "GET /one HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        var received = Data()
        while case .bytes = connection.read(into: &received) {}
        let text = String(decoding: received, as: UTF8.self)
        let bodies = text.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix { $0 != "H" } }
        #expect(bodies == ["first", "second", "first"])
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count == 4)
        #expect(server.recordedRequests(for: "/two").first?.method == "POST")
    }

    @Test func malformedRequestGets400AndAClose() throws {
        let server = try LoopbackServer()
        let connection = try #require(RawConnection(port: server.port))
        connection.send("NONSENSE\r\n\r\n")
        var received = Data()
        while case .bytes = connection.read(into: &received) {}
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 400 "))
        #expect(server.totalRequestCount == 0)
    }
}
