import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import ManagedCache

/// `ObjectUser.delivery()`: plain `async` code waits for a user's object without a continuation
/// of its own. Answered at once when ready or failed, else by the manager; a changed request or
/// a cancelled task ends the wait with `.cancelled(.caller)`; no waiter is left behind.
@Suite(.offCooperativePool) struct ObjectUserDeliveryTests {
    @Test func aFreshObjectIsDeliveredCurrentAndAgainAtOnce() async throws {
        let server = try LoopbackServer()
        server.setRoute("/fresh", .ok(Data("fresh".utf8)))
        let manager = makeNetworkManager()
        let user = ObjectUser(request: ObjectRequest(url: server.url("/fresh")), decoder: BlobDecoder())
        manager.manage(user)
        let delivery = try await user.delivery()
        #expect(delivery.object.text == "fresh" && delivery.origin == .network && delivery.freshness == .current)
        // Ready now: the same object, at once, without another request.
        #expect(try await user.delivery().object === delivery.object)
        #expect(server.requestCount(for: "/fresh") == 1)
        #expect(user.pendingDeliveryWaiters == 0)
    }

    @Test func aFailureIsThrownTyped() async throws {
        let server = try LoopbackServer()
        server.setRoute("/missing", .status(404))
        let manager = makeNetworkManager()
        let user = ObjectUser(request: ObjectRequest(url: server.url("/missing")), decoder: BlobDecoder())
        manager.manage(user)
        await #expect(throws: ManagedCacheError.httpStatus(code: 404)) { try await user.delivery() }
    }

    @Test func aChangedRequestOrACancelledTaskEndsTheWait() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/held", response: .ok(Data("held".utf8)))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let user = ObjectUser(request: ObjectRequest(url: server.url("/held")), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { gate.arrivals == 1 })

        let replaced = Task { try await user.delivery() }
        #expect(await waitUntil { user.pendingDeliveryWaiters == 1 })
        user.request = ObjectRequest(url: server.url("/other"))
        await #expect(throws: ManagedCacheError.cancelled(.caller)) { try await replaced.value }

        let cancelled = Task { try await user.delivery() }
        #expect(await waitUntil { user.pendingDeliveryWaiters == 1 })
        cancelled.cancel()
        await #expect(throws: ManagedCacheError.cancelled(.caller)) { try await cancelled.value }
        #expect(user.pendingDeliveryWaiters == 0)
    }

    @Test func aUserWithoutARequestIsAnsweredAtOnce() async {
        let user = ObjectUser(decoder: BlobDecoder())
        await #expect(throws: ManagedCacheError.invalidRequest(reason: "the user has no request")) { try await user.delivery() }
    }

    @Test func theOnReadyFormsAreStillCalledWithObjectAndOrigin() async throws {
        let server = try LoopbackServer()
        server.setRoute("/object", .ok(Data("object".utf8)))
        let manager = makeNetworkManager()
        let origins = Counter()
        let user = ObjectUser(request: ObjectRequest(url: server.url("/object")), decoder: BlobDecoder()) { blob, origin in
            if blob.text == "object", origin == .network { origins.increment() }
        }
        manager.manage(user)
        _ = try await user.delivery()
        #expect(await waitUntil { origins.count == 1 })
    }

    @Test func printedOutcomesOriginsAndFreshnessRead() {
        #expect("\(PrefetchOutcome.loaded(.network))" == "loaded from network")
        #expect("\(PrefetchOutcome.alreadyCached(.fileCache))" == "already cached in fileCache")
        #expect("\(PrefetchOutcome.failed(.httpStatus(code: 404)))" == "failed: HTTP status 404")
        #expect("\(PrefetchOutcome.cancelled)" == "cancelled")
        #expect("\(DataOrigin.sharedObject)" == "sharedObject")
        #expect("\(ObjectFreshness.current)" == "current")
        #expect("\(ObjectFreshness.stale(revalidationError: nil))" == "stale (revalidating)")
        #expect("\(ObjectFreshness.stale(revalidationError: .httpStatus(code: 503)))" == "stale (revalidation failed: HTTP status 503)")
        #expect("\(ObjectDelivery(object: 7, origin: .memory))" == "7 from memory, current")
    }
}
