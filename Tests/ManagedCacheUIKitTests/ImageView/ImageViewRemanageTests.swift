#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheUIKit
import Testing
import TestSupport

/// A view given a new signed URL with the same oid, while the first
/// URL still loads or after it was shown, shows the image (once) instead of spinning forever.
/// (The view has no headers or policy of its own, so a new URL is the change it can make.)
@Suite struct ImageViewRemanageTests {
    @Test(arguments: [false, true])
    func aNewURLWithTheSameOIDShowsTheImage(firstLoadFinished: Bool) async throws {
        let server = try LoopbackServer()
        let bytes = pngBytes(seed: 7)
        let image = try decodedPNG(seed: 7)
        let gate = GatedRoute(server, path: "/photo", response: .ok(bytes, contentType: "image/png"))
        defer { gate.open() }
        var configuration = ObjectManager.Configuration.images()
        configuration.policy.retry = .none
        configuration.policy.timeout = 300  // gates hold loads open: no idle timer may end them
        let manager = ObjectManager(configuration: configuration)
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)

        view.load(url: server.url("/photo?sig=1"), oid: "photo-7")
        #expect(await waitUntil { gate.arrivals == 1 })
        if firstLoadFinished {
            gate.open()
            #expect(await waitUntil { recorder.contents.last == .image(image) })
        }
        view.load(url: server.url("/photo?sig=2"), oid: "photo-7")
        gate.open()

        #expect(
            await waitUntil {
                recorder.contents.last == .image(image) && !view.isActivityIndicatorVisible
                    && recorder.callbacks.last.map { if case .imageSet = $0 { true } else { false } } == true
            })
        #expect(await waitUntil { manager.activeLoadCount == 0 })
        let imageSets = recorder.callbacks.filter { if case .imageSet = $0 { true } else { false } }
        #expect(imageSets.count == (firstLoadFinished ? 2 : 1))
        #expect(server.requestCount(for: "/photo") == 1)
    }
}
#endif
