import Foundation
import ManagedCache
import TestSupport
import Testing

/// Distinct requests have distinct keys, byte for byte, in memory as on disk.
@Suite struct KeyTests {
    @Test func canonicallyEquivalentOidsAreDistinctKeys() async {
        let loader = ScriptedDataLoader()
        loader.script("nfc", .body(Data("precomposed".utf8)))
        loader.script("nfd", .body(Data("decomposed".utf8)))
        let manager = makeScriptedManager(loader: loader)
        // Equal as Swift Strings (canonical equivalence), different bytes: two different oids,
        // as they are for the file cache.
        #expect("caf\u{E9}" == "cafe\u{301}")
        let precomposed = RecordingUser(request("nfc", oid: "caf\u{E9}"), decoder: BlobDecoder())
        let decomposed = RecordingUser(request("nfd", oid: "cafe\u{301}"), decoder: BlobDecoder())
        manager.manage(precomposed)
        #expect(await waitUntil { precomposed.finalCallbackCount == 1 })
        manager.manage(decomposed)
        #expect(await waitUntil { decomposed.finalCallbackCount == 1 })
        #expect(precomposed.objects.map(\.text) == ["precomposed"])
        #expect(decomposed.objects.map(\.text) == ["decomposed"])
        #expect(request("nfc", oid: "caf\u{E9}").dataKey != request("nfd", oid: "cafe\u{301}").dataKey)
    }

    @Test func anOidSpellingAKeyHeaderSuffixIsAnotherKey() async {
        let loader = ScriptedDataLoader()
        loader.script("png", .body(Data("png".utf8)))
        loader.script("spelled", .body(Data("spelled".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let negotiated = ObjectRequest(
            url: ScriptedDataLoader.url("png"), oid: "pic", headers: ["Accept": "image/png"], keyHeaders: ["Accept"])
        let spelled = request("spelled", oid: "pic\u{1F}accept=image/png")
        #expect(negotiated.dataKey != spelled.dataKey)
        let first = RecordingUser(negotiated, decoder: BlobDecoder())
        let second = RecordingUser(spelled, decoder: BlobDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.finalCallbackCount == 1 })
        manager.manage(second)
        #expect(await waitUntil { second.finalCallbackCount == 1 })
        #expect(first.objects.map(\.text) == ["png"])
        #expect(second.objects.map(\.text) == ["spelled"])
    }

    /// Stores a marked variant of every object it decodes.
    struct VariantDecoder: ObjectDecoding {
        var identifier: String { "v" }
        var storesVariant: Bool { true }
        func decode(_ data: LoadedData) throws -> Blob { Blob(try data.bytes()) }
        func encodedVariant(of object: Blob) -> Data? { Data("VARIANT".utf8) }
    }

    @Test func aKeyHeaderNamedVariantNeverReachesAStoredVariant() async throws {
        let loader = ScriptedDataLoader()
        loader.script("original", .body(Data("original".utf8)))
        loader.script("other", .body(Data("other".utf8)))
        let directory = TemporaryDirectory()
        let fileCache = SimpleFileCache(directory: directory.url)
        let manager = makeScriptedManager(loader: loader) { $0.fileCache = fileCache }
        let original = ObjectRequest(url: ScriptedDataLoader.url("original"), oid: "pic")
        let user = RecordingUser(original, decoder: VariantDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.finalCallbackCount == 1 && fileCache.commits.count == 2 })
        // Another request whose key headers spell the variant's file key.
        let lookalike = ObjectRequest(url: ScriptedDataLoader.url("other"), oid: "pic", headers: ["variant": "v"], keyHeaders: ["variant"])
        let reader = RecordingUser(lookalike, decoder: DataDecoder())
        manager.manage(reader)
        #expect(await waitUntil { reader.finalCallbackCount == 1 })
        #expect(reader.objects == [Data("other".utf8)])
    }

    @Test func plainOidsAndURLsKeepTheirKeys() {
        let url = URL(string: "https://example.com/a/b%20c.png?size=2&x=%C3%A9")!
        #expect(ObjectRequest(url: url).dataKey == url.absoluteString)
        #expect(ObjectRequest(url: url, oid: "user-42/avatar=large").dataKey == "user-42/avatar=large")
        #expect(
            ObjectRequest(url: url, headers: ["Accept": "image/webp"], keyHeaders: ["Accept"]).dataKey
                == url.absoluteString + "\u{1F}accept=image/webp")
    }

    @Test func keysWithOtherBytesAreEscapedAndStayDistinct() {
        let url = URL(string: "https://example.com/x")!
        let oids = ["caf\u{E9}", "cafe\u{301}", "a\\b", "a\\x5cb", "a\u{0}b", "a\\x00b", "\u{212B}", "\u{C5}", "p\u{1F}q", "é"]
        let keys = oids.map { ObjectRequest(url: url, oid: $0).dataKey }
        #expect(Set(keys.map { Array($0.utf8) }).count == oids.count)
        #expect(keys.allSatisfy { key in key.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E } })
        #expect(Set(keys).count == oids.count)  // distinct as Strings too: no canonical equivalence left
    }

    @Test func changingAFieldOfARequestChangesItsKeyAndEquality() {
        let url = URL(string: "https://example.com/a.png")!
        var request = ObjectRequest(url: url)
        let copy = request
        request.oid = "avatar-1"
        #expect(request.dataKey == "avatar-1")
        #expect(copy.dataKey == url.absoluteString)  // a copy keeps its own fields and key
        request.headers = ["Accept": "image/png"]
        request.keyHeaders = ["Accept"]
        #expect(request.dataKey == "avatar-1\u{1F}accept=image/png")
        request.oid = nil
        request.url = URL(string: "https://example.com/b.png")!
        #expect(request.dataKey == "https://example.com/b.png\u{1F}accept=image/png")
        request.policy.cacheInMemory = false
        let rebuilt = ObjectRequest(
            url: URL(string: "https://example.com/b.png")!, headers: ["Accept": "image/png"],
            keyHeaders: ["Accept"], policy: PolicyOverrides(cacheInMemory: false))
        #expect(request == rebuilt)
        #expect(request.hashValue == rebuilt.hashValue)
        #expect(request != copy)
        #expect(Set([request, rebuilt, copy]).count == 2)
    }
}
