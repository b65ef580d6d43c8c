import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// Previews, engine side: made from the bytes as they arrive, only for users that
/// want them, throttled, never cached, and followed by the object or a failure.
@Suite struct PreviewDeliveryTests {
    private let chunks: [Data?] = ["a\n", "b\n", "c\n", "d END"].map { Data($0.utf8) }

    @Test func previewsGoOnlyToUsersThatWantThemAndTheObjectFollows() async {
        let loader = ChunkedLoader()
        loader.script("lines", chunks: chunks)
        let manager = makePreviewManager(loader)
        let decoder = LinePreviewDecoder()
        let url = ChunkedLoader.url("lines")
        let wanting = PreviewRecordingUser(url, decoder: decoder, wantsPreviews: true)
        let other = PreviewRecordingUser(url, decoder: decoder, wantsPreviews: false)
        manager.manage(wanting)
        manager.manage(other)
        // One chunk at a time, each completing a line: a preview for each.
        for expected in ["preview: a", "preview: a b", "preview: a b c"] {
            loader.release("lines")
            #expect(await waitUntil { wanting.previews.last == expected })
            // Never cached: the memory cache has nothing for the key while it loads.
            #expect(manager.cachedObject(for: ObjectRequest(url: url), decoder: decoder) == nil)
        }
        loader.release("lines")
        #expect(await waitUntil { wanting.events.last == .ready("a\nb\nc\nd END") })
        #expect(wanting.events == [.preview("preview: a"), .preview("preview: a b"), .preview("preview: a b c"), .ready("a\nb\nc\nd END")])
        #expect(await waitUntil { other.events == [.ready("a\nb\nc\nd END")] })
        #expect(manager.cachedObject(for: ObjectRequest(url: url), decoder: decoder) == "a\nb\nc\nd END")
        #expect(decoder.sessions.count == 1)  // one session for the download, shared by nobody else
    }

    @Test func noSessionIsMadeWithoutAUserThatWantsPreviews() async {
        let loader = ChunkedLoader()
        loader.script("lines", chunks: chunks)
        loader.release("lines", count: chunks.count)
        let manager = makePreviewManager(loader)
        let decoder = LinePreviewDecoder()
        let user = PreviewRecordingUser(ChunkedLoader.url("lines"), decoder: decoder, wantsPreviews: false)
        manager.manage(user)
        #expect(await waitUntil { user.events == [.ready("a\nb\nc\nd END")] })
        #expect(decoder.sessions.count == 0)
    }

    @Test func previewsComeNoMoreOftenThanTheInterval() async {
        let loader = ChunkedLoader()
        loader.script("lines", chunks: chunks)
        // An hour between previews: the first stage shows, the next two wait, the end ends it.
        let manager = makePreviewManager(loader, interval: 3600)
        let decoder = LinePreviewDecoder()
        let user = PreviewRecordingUser(ChunkedLoader.url("lines"), decoder: decoder, wantsPreviews: true)
        manager.manage(user)
        loader.release("lines")
        #expect(await waitUntil { user.previews == ["preview: a"] })
        loader.release("lines", count: 3)
        #expect(await waitUntil { user.events.last == .ready("a\nb\nc\nd END") })
        #expect(user.events == [.preview("preview: a"), .ready("a\nb\nc\nd END")])
    }

    @Test func aFailedLoadEndsWithTheFailureAfterItsPreviews() async {
        let loader = ChunkedLoader()
        loader.script("lines", chunks: [Data("a\n".utf8), nil])
        let manager = makePreviewManager(loader)
        let decoder = LinePreviewDecoder()
        let user = PreviewRecordingUser(ChunkedLoader.url("lines"), decoder: decoder, wantsPreviews: true)
        manager.manage(user)
        loader.release("lines")
        #expect(await waitUntil { user.previews == ["preview: a"] })
        loader.release("lines")
        #expect(await waitUntil { user.events.last == .failed })
        #expect(user.events == [.preview("preview: a"), .failed])
        #expect(manager.cachedObject(for: ObjectRequest(url: ChunkedLoader.url("lines")), decoder: decoder) == nil)
    }

    @Test func aUserManagedAgainWithoutPreviewsGetsNoMore() async {
        let loader = ChunkedLoader()
        loader.script("lines", chunks: chunks)
        let manager = makePreviewManager(loader)
        let decoder = LinePreviewDecoder()
        let url = ChunkedLoader.url("lines")
        let user = SwitchingPreviewUser(url, decoder: decoder)
        manager.manage(user)
        loader.release("lines")
        #expect(await waitUntil { user.previews == ["preview: a"] })
        user.setWantsPreviews(false)
        manager.manage(user)  // the same request: it stays on the load, without previews now
        loader.release("lines", count: 3)
        #expect(await waitUntil { user.readyCount == 1 })
        #expect(user.previews == ["preview: a"])
    }
}

/// A user whose `wantsPreviews` the test changes between `manage` calls.
private final class SwitchingPreviewUser: ManagedObjectUser {
    private struct State {
        var wants = true
        var previews: [String] = []
        var readyCount = 0
    }

    let objectRequest: ObjectRequest?
    let objectDecoder: LinePreviewDecoder
    private let state = Lock(State())

    init(_ url: URL, decoder: LinePreviewDecoder) {
        objectRequest = ObjectRequest(url: url)
        objectDecoder = decoder
    }

    var wantsPreviews: Bool { state.withLock { $0.wants } }
    func setWantsPreviews(_ wants: Bool) { state.withLock { $0.wants = wants } }
    var previews: [String] { state.withLock { $0.previews } }
    var readyCount: Int { state.withLock { $0.readyCount } }

    func managedObjectPreview(_ preview: String, request: ObjectRequest) { state.withLock { $0.previews.append(preview) } }
    func managedObjectReady(_ object: String, origin: DataOrigin, request: ObjectRequest) { state.withLock { $0.readyCount += 1 } }
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {}
}
