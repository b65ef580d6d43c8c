import Foundation
import LoopbackServer
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// An expired (`max-age=0`) object served because the server is gone says so through every
/// delivery API: the `await` forms that return a delivery, `deliveryEvents`, an `ObjectUser`'s
/// `onDelivery` and `delivery()`, and the manager's event handler; the older forms still return
/// the object. A real `FileCache` reopened on what a previous run left, and the loopback server
/// refusing connections.
@Suite(.offCooperativePool) struct StaleDeliveryTests {
    static let path = "/feed"

    /// A previous run leaves an expired entry; then the server refuses connections and a new
    /// manager opens the same directory, recording its events.
    static func offlineLaunch() async throws -> (ObjectManager, URL, EventLog, LoopbackServer, TemporaryDirectory) {
        let server = try LoopbackServer()
        let directory = TemporaryDirectory()
        server.setRoute(path, .ok(Data("version 1".utf8)).caching(etag: "\"v1\"", cacheControl: "max-age=0"))
        do {
            let previous = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
            _ = try await previous.data(from: server.url(path))
        }
        try server.refuseConnections()
        let events = EventLog()
        let manager = makeNetworkManager(fileCache: try FileCache(directory: directory.url)) { $0.eventHandler = events.handler }
        return (manager, server.url(path), events, server, directory)
    }

    /// The events a manager reported.
    final class EventLog: Sendable {
        private let events = Lock<[ManagerEvent]>([])
        var handler: @Sendable (ManagerEvent) -> Void { { [self] event in events.withLock { $0.append(event) } } }
        var staleDeliveries: [(key: ObjectKey, origin: DataOrigin, error: ManagedCacheError?)] {
            events.withLock { events in
                events.compactMap { event in
                    guard case .staleObjectDelivered(let key, let origin, let error) = event else { return nil }
                    return (key, origin, error)
                }
            }
        }
    }

    /// Stale, with the failure that kept it from being revalidated (the refused connection).
    static func expectStaleAfterFailure(_ freshness: ObjectFreshness, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .stale(let error?) = freshness else {
            Issue.record("\(what): expected stale with a failure, got \(freshness)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.isTransient, "\(what): \(error)", sourceLocation: sourceLocation)
    }

    @Test func everyAwaitFormAndTheEventHandlerTellTheObjectIsStale() async throws {
        let (manager, url, events, server, directory) = try await Self.offlineLaunch()
        defer { withExtendedLifetime((server, directory)) {} }

        let delivery = try await manager.delivery(for: ObjectRequest(url: url), decoder: BlobDecoder())
        #expect(delivery.object.text == "version 1")
        #expect(delivery.origin == .fileCache)
        Self.expectStaleAfterFailure(delivery.freshness, "delivery(for:decoder:)")

        let data = try await manager.dataDelivery(from: url)
        #expect(data.object == Data("version 1".utf8))
        Self.expectStaleAfterFailure(data.freshness, "dataDelivery(from:)")

        var streamed: [ObjectDelivery<Blob>] = []
        for try await event in manager.deliveryEvents(for: ObjectRequest(url: url), decoder: BlobDecoder()) {
            if case .delivered(let delivery) = event { streamed.append(delivery) }
        }
        #expect(streamed.map(\.object.text) == ["version 1"])
        // The copy the first call left in memory, tried against the network again and shown again.
        #expect(streamed.map(\.origin) == [.memory])
        Self.expectStaleAfterFailure(streamed.first?.freshness ?? .current, "deliveryEvents(for:decoder:)")

        // The forms without freshness still answer with the object.
        #expect(try await manager.object(for: ObjectRequest(url: url), decoder: BlobDecoder()).text == "version 1")
        var objects: [String] = []
        for try await event in manager.loadEvents(for: ObjectRequest(url: url), decoder: BlobDecoder()) {
            if case .object(let blob, _) = event { objects.append(blob.text) }
        }
        #expect(objects == ["version 1"])

        // Five stale deliveries, each reported with the failure.
        let reported = events.staleDeliveries
        #expect(reported.count == 5)
        #expect(reported.allSatisfy { $0.error?.isTransient == true })
        #expect(reported.first?.origin == .fileCache && reported.first?.key.dataKey == url.absoluteString)
    }

    @Test func anObjectUserTellsItsClosureAndItsAwaitingTasks() async throws {
        let (manager, url, events, server, directory) = try await Self.offlineLaunch()
        defer { withExtendedLifetime((server, directory)) {} }
        let told = Lock<[ObjectDelivery<Blob>]>([])
        let user = ObjectUser(
            request: ObjectRequest(url: url), decoder: BlobDecoder(),
            onDelivery: { delivery in
                told.withLock { $0.append(delivery) }
            })
        // Two tasks wait before the manager is asked; one more asks once the object is there.
        async let first = user.delivery()
        async let second = user.delivery()
        #expect(await waitUntil { user.pendingDeliveryWaiters == 2 })
        manager.manage(user)
        let waited = try await [first, second]
        let afterwards = try await user.delivery()
        // The awaiting tasks are resumed before the closure is called, on the delivering thread.
        #expect(await waitUntil { !told.withLock { $0.isEmpty } })

        for delivery in waited + [afterwards] + told.withLock({ $0 }) {
            #expect(delivery.object.text == "version 1" && delivery.origin == .fileCache)
            Self.expectStaleAfterFailure(delivery.freshness, "ObjectUser")
        }
        #expect(told.withLock { $0.count } == 1)
        Self.expectStaleAfterFailure(user.freshness, "ObjectUser.freshness")
        #expect(events.staleDeliveries.count == 1)
    }
}
