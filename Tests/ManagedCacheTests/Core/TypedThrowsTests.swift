import Foundation
import ManagedCache
import TestSupport
import Testing

/// The `async` API throws `ManagedCacheError` in its type, so a caller switches over
/// the cases with no cast (these tests would not compile if it threw `any Error`).
@Suite struct TypedThrowsTests {
    @Test func loadEventsThrowsAManagedCacheError() async {
        let loader = ScriptedDataLoader()
        loader.script("gone", .failure(.httpStatus(code: 410)))
        let manager = makeScriptedManager(loader: loader)
        var statusCode: Int?
        do {
            for try await _ in manager.loadEvents(for: request("gone"), decoder: BlobDecoder()) {}
            Issue.record("the stream ended without its error")
        } catch .httpStatus(let code) {
            statusCode = code
        } catch {
            let typed: ManagedCacheError = error
            Issue.record("unexpected \(typed)")
        }
        #expect(statusCode == 410)
    }

    @Test func loadEventsDeliversProgressThenTheObject() async throws(ManagedCacheError) {
        let loader = ScriptedDataLoader()
        loader.script("ok", .body(Data("fine".utf8)))
        let manager = makeScriptedManager(loader: loader)
        var objects: [Blob] = []
        for try await event in manager.loadEvents(for: request("ok"), decoder: BlobDecoder()) {
            if case .object(let blob, _) = event { objects.append(blob) }
        }
        #expect(objects.map(\.text) == ["fine"])
    }

    @Test func objectAndDataThrowAManagedCacheError() async {
        let loader = ScriptedDataLoader()
        loader.script("missing", .failure(.httpStatus(code: 404)))
        let manager = makeScriptedManager(loader: loader)
        do {
            _ = try await manager.object(for: request("missing"), decoder: BlobDecoder())
            Issue.record("no error")
        } catch {
            let typed: ManagedCacheError = error
            #expect(typed == .httpStatus(code: 404))
        }
    }
}
