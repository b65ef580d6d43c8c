import Foundation
import ManagedCache
import TestSupport
import Testing

@Suite struct FailureTests {
    @Test func permanentFailureIsRememberedAndNotRequestedAgain() async {
        let loader = ScriptedDataLoader()
        loader.script("gone", .failure(.httpStatus(code: 404)))
        let manager = makeScriptedManager(loader: loader)
        let user = RecordingUser(request("gone"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        #expect(user.errors == [.httpStatus(code: 404)])
        manager.manage(user)
        #expect(user.errors.last == .recentlyFailed(.httpStatus(code: 404)))
        #expect(loader.requestCount("gone") == 1)
        manager.forgetFailure(for: request("gone"))
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 3 })
        #expect(loader.requestCount("gone") == 2)
    }

    @Test func transientFailureIsRetriedWithBackoffThenReported() async {
        let loader = ScriptedDataLoader()
        loader.script("flaky", .failure(.httpStatus(code: 503)))
        let manager = makeScriptedManager(loader: loader) {
            $0.policy.retry = RetryPolicy(maximumRetries: 2, initialDelay: 0.01)
        }
        let user = RecordingUser(request("flaky"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        #expect(loader.requestCount("flaky") == 3)
        #expect(user.errors == [.httpStatus(code: 503)])
        // Transient failures are not remembered: the next manage asks again.
        manager.manage(user)
        #expect(await waitUntil { loader.requestCount("flaky") == 6 })
    }

    @Test func decodeFailurePurgesAndReportsTypedError() async {
        let loader = ScriptedDataLoader()
        loader.script("bad", .body(Data("BAD bytes".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let user = RecordingUser(request("bad"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        guard case .decodingFailed = user.errors.first else {
            Issue.record("expected decodingFailed, got \(user.errors)")
            return
        }
        #expect(manager.memoryCache.count == 0)
        #expect(manager.statistics.failures[.decoding] == 1)
    }

    @Test func forgettingAFailureAlsoForgetsADecodingFailureOfTheKey() async {
        let loader = ScriptedDataLoader()
        loader.script("bad", .body(Data("BAD bytes".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let user = RecordingUser(request("bad"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.errors.count == 1 })
        manager.manage(user)
        #expect(user.errors.count == 2)
        guard case .recentlyFailed(.decodingFailed) = user.errors.last else {
            Issue.record("expected recentlyFailed(decodingFailed), got \(user.errors)")
            return
        }
        // The server is fixed; the caller forgets the failure and asks again.
        loader.script("bad", .body(Data("good bytes".utf8)))
        manager.forgetFailure(for: request("bad"))
        manager.manage(user)
        #expect(await waitUntil { user.finalCallbackCount == 3 })
        #expect(user.objects.map(\.text) == ["good bytes"])
        #expect(loader.requestCount("bad") == 2)
    }

    @Test func aDecodingFailureIsNotReportedForAnotherKeyThatSpellsItsDescription() async {
        let loader = ScriptedDataLoader()
        loader.script("bad", .body(Data("BAD bytes".utf8)))
        loader.script("other", .body(Data("other".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let failing = RecordingUser(request("bad"), decoder: BlobDecoder())
        manager.manage(failing)
        #expect(await waitUntil { failing.errors.count == 1 })
        let failedKey = ObjectKey(dataKey: request("bad").dataKey, variant: BlobDecoder().identifier)
        // An oid equal to the failed object key's description is a different key.
        let lookalike = RecordingUser(request("other", oid: failedKey.description), decoder: BlobDecoder())
        manager.manage(lookalike)
        #expect(await waitUntil { lookalike.finalCallbackCount == 1 })
        #expect(lookalike.objects.map(\.text) == ["other"])
    }

    @Test func unsupportedSchemeFailsAtOnceWithInvalidRequest() {
        let manager = ObjectManager()
        let user = RecordingUser(ObjectRequest(url: URL(string: "gopher://example.com/x")!), decoder: BlobDecoder())
        manager.manage(user)
        guard case .invalidRequest = user.errors.first else {
            Issue.record("expected invalidRequest, got \(user.errors)")
            return
        }
        let noHost = RecordingUser(ObjectRequest(url: URL(string: "http:///path")!), decoder: BlobDecoder())
        manager.manage(noHost)
        #expect(noHost.errors.count == 1)
    }

    @Test func errorClassificationSeparatesPermanentFromTransient() {
        #expect(ManagedCacheError.httpStatus(code: 404).isPermanent)
        #expect(!ManagedCacheError.httpStatus(code: 404).isTransient)
        #expect(ManagedCacheError.httpStatus(code: 503).isTransient)
        #expect(ManagedCacheError.httpStatus(code: 429).isTransient)
        #expect(!ManagedCacheError.httpStatus(code: 429).isPermanent)
        #expect(ManagedCacheError.timedOut(seconds: 1).isTransient)
        #expect(ManagedCacheError.decodingFailed(reason: "x").isPermanent)
        #expect(!ManagedCacheError.cancelled(.caller).isTransient)
    }
}
