#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import LoopbackServer
import ManagedCacheLocking
import ManagedCacheUIKit
import Testing
import TestSupport

@testable import ManagedCache

/// A switch a test turns on once.
private final class Switch: Sendable {
    private let state = Lock(false)
    func turnOn() { state.withLock { $0 = true } }
    var isOn: Bool { state.withLock { $0 } }
}

/// An image view given an image and an oid shows it and stores it, and a later load of the oid
/// is a memory hit.
@Suite struct ImageViewStoredImageTests {
    @Test func theViewShowsTheImageAtOnceAndALaterLoadOfTheOidIsAMemoryHit() async throws {
        let server = try LoopbackServer()
        server.setRoute("/avatar.png", .ok(pngBytes(seed: 1), contentType: "image/png"))
        let manager = makeNetworkManager()
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)
        let mine = try decodedPNG(seed: 2)
        view.setImage(mine, oid: "avatar-42")
        #expect(recorder.displays == [ImageViewDisplay(content: .image(mine))], "shown at once, no transition")
        #expect(recorder.callbacks == [.imageSet(mine, .stored)])
        #expect(view.oid == "avatar-42" && view.url == nil)

        let other = ManagedImageView(manager: manager)
        let otherRecorder = ViewRecorder(other)
        other.load(url: server.url("/avatar.png"), oid: "avatar-42")
        #expect(otherRecorder.displays == [ImageViewDisplay(content: .image(mine))])
        #expect(otherRecorder.callbacks == [.imageSet(mine, .memory)])
        #expect(server.requestCount(for: "/avatar.png") == 0)

        // Managing the view again changes nothing: it already shows its request's image.
        view.manage()
        #expect(recorder.callbacks.count == 1)
    }

    @Test func aViewWithProcessorsShowsTheImageThenItsVariantOnceMade() async throws {
        let manager = makeNetworkManager()
        let view = ManagedImageView(manager: manager)
        // The variant is held until the view shows the image (made at once, it would reach the
        // view inside `setImage` as a memory hit, and be all the view ever shows: also right).
        let open = Switch()
        let held = ClosureImageProcessor(identifier: "held") { image in
            waitUntilBlocking { open.isOn }
            return image
        }
        view.processors = [CircleImageProcessor(), held]
        let recorder = ViewRecorder(view)
        let mine = try decodedPNG(width: 8, height: 6, seed: 3)
        view.setImage(mine, oid: "round")
        #expect(recorder.displays == [ImageViewDisplay(content: .image(mine))])
        open.turnOn()
        let circle = try CircleImageProcessor().process(mine)
        #expect(await waitUntil { recorder.contents.last == .image(circle) && recorder.callbacks.last == .imageSet(circle, .stored) })
        #expect(recorder.callbacks == [.imageSet(mine, .stored), .imageSet(circle, .stored)])
        #expect(recorder.displays.last?.transition == .fade, "the variant replaces what was on screen")
        let decoder = ImageDecoder(processors: [CircleImageProcessor(), held])
        #expect(manager.cachedObject(for: ObjectRequest(oid: "round"), decoder: decoder) == circle)
        #expect(manager.cachedObject(for: ObjectRequest(oid: "round"), decoder: ImageDecoder()) == mine)
    }

    @Test func withToFileCacheTheImageIsWrittenAndAManagerReadsItLater() async throws {
        let server = try LoopbackServer()
        server.setRoute("/p.png", .ok(pngBytes(seed: 5), contentType: "image/png"))
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let view = ManagedImageView(manager: makeNetworkManager(fileCache: fileCache))
        let mine = try decodedPNG(seed: 6)
        let request = ObjectRequest(url: server.url("/p.png"), oid: "p")
        view.setImage(mine, oid: "p", url: server.url("/p.png"), toFileCache: true)
        #expect(view.url == server.url("/p.png"))
        #expect(await waitUntil { fileCache.entry(forKey: request.dataKey) != nil })
        let later = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        #expect(try await later.image(for: server.url("/p.png"), oid: "p") == mine)
        #expect(server.requestCount(for: "/p.png") == 0)
    }

    @Test func anOidAloneIsFoundInTheCachesOnlyAndFailsOnceTheyLetItGo() async throws {
        let manager = makeNetworkManager()
        let view = ManagedImageView(manager: manager)
        view.setImage(try decodedPNG(seed: 7), oid: "drawn")
        let recorder = ViewRecorder(view)
        manager.removeAllObjects()
        view.clear()
        view.oid = "drawn"
        view.manage()
        #expect(await waitUntil { recorder.callbacks.count == 1 })
        guard case .failed(.invalidRequest) = recorder.callbacks.first else {
            Issue.record("expected .invalidRequest, got \(recorder.callbacks)")
            return
        }
    }
}
#endif
