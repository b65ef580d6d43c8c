#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking
import ManagedCacheUIKit
import Testing
import TestSupport

/// A switch a test turns on once.
private final class Switch: Sendable {
    private let state = Lock(false)
    func turnOn() { state.withLock { $0 = true } }
    var isOn: Bool { state.withLock { $0 } }
}

/// A format whose processing waits until the test turns `open` on: a decode that takes as long
/// as the test needs, whatever the bytes came from.
private func heldFormat(_ open: Switch) -> ImageCacheFormat {
    ImageCacheFormat(
        name: "held",
        processors: [
            ClosureImageProcessor(identifier: "held") { image in
                waitUntilBlocking { open.isOn }
                return image
            }
        ])
}

/// When the image view animates an image in, decided by the view core and visible
/// in the headless view's display.
@Suite struct ImageViewTransitionTests {
    @Test func anImageFromTheNetworkFadesInAfterThePlaceholderAndNothingElseAnimates() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/a.png", response: .ok(pngBytes(seed: 1), contentType: "image/png"))
        defer { gate.open() }
        let view = ManagedImageView(manager: makeNetworkManager())
        view.placeholder = try decodedPNG(seed: 99)
        let recorder = ViewRecorder(view)
        view.load(url: server.url("/a.png"))
        #expect(await waitUntil { gate.arrivals == 1 })
        #expect(recorder.displays.allSatisfy { $0.transition == .none }, "the placeholder and spinner are set at once")
        gate.open()
        let image = try decodedPNG(seed: 1)
        #expect(await waitUntil { recorder.contents.last == .image(image) && recorder.callbacks.last == .imageSet(image, .network) })
        #expect(recorder.displays.last?.transition == .fade)
        #expect(recorder.displays.dropLast().allSatisfy { $0.transition == .none })
        #expect(recorder.callbacks.last == .imageSet(image, .network))
    }

    @Test func aMemoryHitIsSetAtOnceAlsoInAReusedView() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a.png", .ok(pngBytes(seed: 1), contentType: "image/png"))
        server.setRoute("/b.png", .ok(pngBytes(seed: 2), contentType: "image/png"))
        let manager = makeNetworkManager()
        let a = try await manager.image(for: server.url("/a.png"))
        let b = try await manager.image(for: server.url("/b.png"))

        // A cell showing A, reused for B: cleared, then loaded; B is in memory.
        let cell = ManagedImageView(manager: manager)
        cell.placeholder = try decodedPNG(seed: 99)
        cell.load(url: server.url("/a.png"))
        #expect(cell.display == ImageViewDisplay(content: .image(a)))
        let recorder = ViewRecorder(cell)
        cell.clear()
        cell.load(url: server.url("/b.png"))
        #expect(cell.display == ImageViewDisplay(content: .image(b)), "no transition: nothing of B's load was shown first")
        #expect(recorder.displays.allSatisfy { $0.transition == .none })
        #expect(server.requestCount(for: "/a.png") == 1 && server.requestCount(for: "/b.png") == 1)
    }

    @Test func anImageFromTheFileCacheOrADecodeFadesIn() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a.png", .ok(pngBytes(seed: 1), contentType: "image/png"))
        let directory = TemporaryDirectory()
        _ = try await makeNetworkManager(fileCache: try FileCache(directory: directory.url)).image(for: server.url("/a.png"))
        // A new manager: the bytes are on disk, the decode (held) runs after the view showed its placeholder.
        let open = Switch()
        let view = ManagedImageView(manager: makeNetworkManager(fileCache: try FileCache(directory: directory.url)))
        view.format = heldFormat(open)
        view.placeholder = try decodedPNG(seed: 99)
        let recorder = ViewRecorder(view)
        view.load(url: server.url("/a.png"))
        #expect(recorder.displays.first?.content == .placeholder(try decodedPNG(seed: 99)))
        open.turnOn()
        #expect(await waitUntil { recorder.callbacks.count == 1 })
        #expect(recorder.callbacks.first == .imageSet(try decodedPNG(seed: 1), .fileCache))
        #expect(recorder.displays.last?.transition == .fade)
        #expect(server.requestCount(for: "/a.png") == 1, "only the first manager downloaded")
    }

    @Test(arguments: [false, true])
    func noTransitionWhenTheViewSaysNoneOrTheUserReducesMotion(reducesMotion: Bool) async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/a.png", response: .ok(pngBytes(seed: 1), contentType: "image/png"))
        defer { gate.open() }
        let view = ManagedImageView(manager: makeNetworkManager())
        if reducesMotion { view.reducesMotion = true } else { view.transition = .none }
        let recorder = ViewRecorder(view)
        view.load(url: server.url("/a.png"))
        #expect(await waitUntil { gate.arrivals == 1 })
        gate.open()
        #expect(await waitUntil { recorder.contents.last?.loadedImage != nil })
        #expect(recorder.displays.last?.transition == ImageTransition.none)
    }

    @Test func aCustomDurationIsCarriedToTheDisplay() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/a.png", response: .ok(pngBytes(seed: 1), contentType: "image/png"))
        defer { gate.open() }
        let view = ManagedImageView(manager: makeNetworkManager())
        view.transition = .crossDissolve(duration: 0.6)
        view.load(url: server.url("/a.png"))
        #expect(await waitUntil { gate.arrivals == 1 })
        gate.open()
        #expect(await waitUntil { view.displayed.loadedImage != nil })
        #expect(view.display.transition == .crossDissolve(duration: 0.6))
    }

    @Test func aNewerStoredImageOfTheShownRequestFadesIn() async throws {
        let server = try LoopbackServer()
        server.setRoute("/avatar.png", .ok(pngBytes(seed: 1), contentType: "image/png"))
        let manager = makeNetworkManager()
        let view = ManagedImageView(manager: manager)
        // Every callback of the first load delivered (the image set is its last) before recording.
        let firstLoad = ViewRecorder(view)
        view.load(url: server.url("/avatar.png"), oid: "avatar-7")
        #expect(await waitUntil { firstLoad.callbacks.last.map { if case .imageSet = $0 { true } else { false } } == true })
        let recorder = ViewRecorder(view)
        let edited = try decodedPNG(seed: 2)
        try await manager.storeImage(edited, for: ObjectRequest(oid: "avatar-7"))
        #expect(await waitUntil { recorder.contents.last == .image(edited) && recorder.callbacks.last == .imageSet(edited, .stored) })
        #expect(recorder.displays == [ImageViewDisplay(content: .image(edited), transition: .fade)])
        #expect(recorder.callbacks == [.imageSet(edited, .stored)])
    }

    @Test func previewsAreShownAtOnceAndTheImageFadesInOverTheLastOne() async throws {
        let body = try ProgressiveScanDetectorTests.fixture("progressive.jpg")
        let server = try LoopbackServer()
        // Cut after the first two scans: two previews, then the rest of the file.
        let gate = BodyGate(breaks: ProgressiveScanDetectorTests.scanEnds.prefix(2).map { $0 + 2 })
        server.setRoute("/photo.jpg", .ok(body, contentType: "image/jpeg").behaving(.gated(gate)))
        let view = ManagedImageView(manager: makeNetworkManager { $0.previewInterval = 0 })
        let recorder = ViewRecorder(view)
        view.load(url: server.url("/photo.jpg"))
        #expect(await waitUntil { recorder.contents.last?.visibleImage?.preview?.completedScans == 1 })
        gate.release()
        #expect(await waitUntil { recorder.contents.last?.visibleImage?.preview?.completedScans == 2 })
        gate.release()
        let image = try ImageDecoder().decodeImage(body)
        #expect(await waitUntil { recorder.contents.last == .image(image) })
        #expect(recorder.displays.dropLast().allSatisfy { $0.transition == .none }, "previews replace each other at once")
        #expect(recorder.displays.last == ImageViewDisplay(content: .image(image), transition: .fade))
    }

    @Test func reducedMotionAndZeroDurationsMeanNoTransition() {
        #expect(ImageTransition.fade.duration == 0.25)
        #expect(ImageTransition.fade.respectingReducedMotion(true) == .none)
        #expect(ImageTransition.fade.respectingReducedMotion(false) == .fade)
        #expect(ImageTransition.crossDissolve(duration: 0).respectingReducedMotion(false) == .none)
        #expect(ImageTransition.crossDissolve(duration: -1).duration == 0)
        #expect(ImageTransition.none.duration == 0)
    }
}
#endif
