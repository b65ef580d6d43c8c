import Foundation
import ManagedCacheLocking
import Testing

@testable import ManagedCache

/// `DefaultDataLoader` routes the common `http`/`https` URL from its string, without parsing it
/// (parsing was 7 % of a `manage` call that starts a load); the shortcut agrees with the full parse wherever it answers.
@Suite struct DefaultDataLoaderRoutingTests {
    static let urls = [
        "http://example.com/a.png", "https://example.com", "HTTPS://Example.COM:8443/a?b=c#d", "http://127.0.0.1:5000/ok/1",
        "https://a-b.example/x", "http://user@example.com/x", "http://user@/x", "http://[::1]:80/x", "http:///x",
        "http://%65xample.com/x", "https:/example.com/x", "httpx://example.com", "ftp://example.com/x",
        "file:///tmp/x", "asset://logo", "mailto:someone@example.com", "https://example.com:/x", "http://:80/x",
    ]

    @Test(arguments: urls)
    func theShortcutAgreesWithTheFullParse(_ string: String) throws {
        let url = try #require(URL(string: string))
        let parsed = ["http", "https"].contains(url.scheme?.lowercased() ?? "") && url.host?.isEmpty == false
        if DefaultDataLoader.isHTTPWithPlainHost(string) {
            #expect(parsed, "the shortcut routed a URL the full parse refuses")
        }
        #expect(DefaultDataLoader().canLoad(url) == (parsed || url.scheme?.lowercased() == "file"))
    }

    @Test func theShortcutTakesTheCommonURLs() {
        for string in ["http://example.com/a.png", "https://example.com", "HTTPS://Example.COM:8443/a?b=c#d", "http://127.0.0.1:5000/ok/1"]
        {
            #expect(DefaultDataLoader.isHTTPWithPlainHost(string), "\(string)")
        }
        for string in ["http://user@example.com/x", "http://[::1]:80/x", "http:///x", "https:/example.com/x", "httpx://example.com"] {
            #expect(!DefaultDataLoader.isHTTPWithPlainHost(string), "\(string)")
        }
    }

    /// A custom loader for `http` still takes every `http` URL: the shortcut is off then.
    @Test func aCustomHTTPLoaderStillRoutes() async throws {
        let custom = RefusingLoader()
        let loader = DefaultDataLoader(custom: ["http": custom])
        let url = try #require(URL(string: "http://example.com/a"))
        #expect(loader.canLoad(url))
        await #expect(throws: ManagedCacheError.self) {
            _ = try await loader.load(DataLoadRequest(url: url), receiver: NullReceiver())
        }
        #expect(custom.calls.withLock { $0 } == 1)
    }
}

private final class RefusingLoader: DataLoading {
    let calls = Lock<Int>(0)
    func canLoad(_ url: URL) -> Bool { true }
    func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        calls.withLock { $0 += 1 }
        throw ManagedCacheError.invalidRequest(reason: "custom")
    }
}

private struct NullReceiver: DataLoadReceiver {
    func didReceive(response: DataLoadResponse) throws {}
    func didReceive(_ data: Data) throws {}
}
