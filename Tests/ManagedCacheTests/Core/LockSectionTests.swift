import Foundation
import LoopbackServer
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// How many times one uncached `manage` takes the manager's lock, against the loopback server
/// through `URLSession`, with a `FileCache`: the call, and the fetch's end (which delivers the
/// object its task decoded before it), however many reports the loader makes (the response head,
/// each chunk: they reach the users from the fetch's audience) and whether the user's decoder
/// makes previews. A delivery's check takes none.
@Suite struct LockSectionTests {
    /// `URLSessionDataLoader`, counting what it reports: each report is one progress section.
    final class CountingLoader: DataLoading {
        let loader = URLSessionDataLoader()
        let reports = Lock(0)

        func canLoad(_ url: URL) -> Bool { loader.canLoad(url) }

        func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
            try await loader.load(request, receiver: CountingReceiver(receiver: receiver, reports: reports))
        }
    }

    struct CountingReceiver: DataLoadReceiver {
        let receiver: any DataLoadReceiver
        let reports: Lock<Int>

        func didReceive(response: DataLoadResponse) throws {
            reports.withLock { $0 += 1 }
            try receiver.didReceive(response: response)
        }

        func didReceive(_ chunk: Data) throws {
            reports.withLock { $0 += 1 }
            try receiver.didReceive(chunk)
        }

        func requestIsWaitingForConnection() { receiver.requestIsWaitingForConnection() }
        func requestDidStart() { receiver.requestDidStart() }
    }

    /// The sections one uncached `manage` of `user`'s request takes, and the loader's reports.
    func sectionsOfOneCall<User: ManagedObjectUser>(
        _ user: User, server: LoopbackServer, loader: CountingLoader, isAnswered: @Sendable () -> Bool
    ) async throws -> (sections: UInt64, reports: UInt64) {
        let directory = TemporaryDirectory()
        let manager = makeNetworkManager(fileCache: try FileCache(directory: directory.url)) {
            $0.dataLoader = loader
        }
        let before = manager.lockSectionCount
        manager.manage(user)
        #expect(await waitUntil(isAnswered))
        // The fetch's task ends after its last section.
        #expect(await waitUntil { manager.runningFetchTaskCount == 0 })
        let sections = manager.lockSectionCount - before
        let reports = UInt64(loader.reports.withLock { $0 })
        #expect(reports >= 2, "the response head and at least one chunk")
        withExtendedLifetime(manager) {}
        return (sections, reports)
    }

    @Test func anUncachedManageTakesTheCallAndTheFetchsEnd() async throws {
        let server = try LoopbackServer()
        server.setRoute("/object", .ok(fixtureBody("object", count: 1_000)))
        let user = RecordingUser(ObjectRequest(url: server.url("/object")), decoder: BlobDecoder())
        let (sections, reports) = try await sectionsOfOneCall(user, server: server, loader: CountingLoader()) {
            user.objects.count == 1
        }
        #expect(sections == 2, "\(sections) sections for \(reports) reports of the loader")
        #expect(user.progress.last?.receivedBytes == 1_000, "the reports reached the user without the manager's lock")
        withExtendedLifetime(server) {}
    }

    @Test func aBodyInManyChunksTakesNoMoreSections() async throws {
        let server = try LoopbackServer()
        // Four pieces, 20 ms apart: the loader reports each as it comes (how many reports it makes
        // is the transfer's business; the count of sections does not depend on it).
        server.setRoute("/object", LoopbackResponse.ok(fixtureBody("object", count: 1_000)).behaving(.drip(chunkSize: 250, interval: 0.02)))
        let user = RecordingUser(ObjectRequest(url: server.url("/object")), decoder: BlobDecoder())
        let (sections, reports) = try await sectionsOfOneCall(user, server: server, loader: CountingLoader()) {
            user.objects.count == 1
        }
        #expect(sections == 2, "\(sections) sections for \(reports) reports of the loader")
        #expect(user.progress.last?.receivedBytes == 1_000)
        withExtendedLifetime(server) {}
    }

    @Test func aUserWantingPreviewsTakesNoMoreSections() async throws {
        let server = try LoopbackServer()
        // No newline: the session takes the bytes and makes no preview.
        server.setRoute("/text", .ok(Data(repeating: UInt8(ascii: "a"), count: 1_000)))
        let decoder = LinePreviewDecoder()
        let user = PreviewRecordingUser(server.url("/text"), decoder: decoder, wantsPreviews: true)
        let (sections, reports) = try await sectionsOfOneCall(user, server: server, loader: CountingLoader()) {
            user.events.contains(.ready(String(repeating: "a", count: 1_000)))
        }
        #expect(decoder.sessions.count == 1, "a preview session was made at the first chunk")
        #expect(sections == 2, "\(sections) sections for \(reports) reports of the loader")
        withExtendedLifetime(server) {}
    }
}
