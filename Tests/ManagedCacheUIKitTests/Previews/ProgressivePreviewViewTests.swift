#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheUIKit
import Testing
import TestSupport

/// Progressive previews end to end on Linux: the real progressive JPEG served by the
/// loopback server a scan at a time, into a headless `ManagedImageView`.
@Suite struct ProgressivePreviewViewTests {
    /// Where the marker after each scan starts (see `ProgressiveScanDetectorTests`).
    private let scanEnds = ProgressiveScanDetectorTests.scanEnds

    private struct Setup {
        let server: LoopbackServer
        let gate: BodyGate
        let manager: ObjectManager
        let url: URL
        let body: Data
        let directory: TemporaryDirectory
    }

    /// The file behind a gate that cuts it just after each scan's next marker: every piece
    /// completes one scan, and the last one (with EOI) completes the image.
    private func setUp(previewInterval: Double = 0) throws -> Setup {
        let body = try ProgressiveScanDetectorTests.fixture("progressive.jpg")
        let server = try LoopbackServer()
        let gate = BodyGate(breaks: scanEnds.dropLast().map { $0 + 2 })
        server.setRoute("/photo.jpg", .ok(body, contentType: "image/jpeg").behaving(.gated(gate)))
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache) { $0.previewInterval = previewInterval }
        return Setup(server: server, gate: gate, manager: manager, url: server.url("/photo.jpg"), body: body, directory: directory)
    }

    private func previewScans(_ content: DisplayedContent) -> Int? {
        if case .preview(let image) = content { return image.preview?.completedScans }
        return nil
    }

    @Test func placeholderThenAPreviewPerScanThenTheImage() async throws {
        let setup = try setUp()
        let placeholder = try ImageDecoder().decodeImage(ProgressiveScanDetectorTests.fixture("rgba.png"))
        let view = ManagedImageView(manager: setup.manager)
        view.placeholder = placeholder
        let recorder = ViewRecorder(view)
        view.load(url: setup.url)
        // The first piece holds scan 1; each release sends the next scan.
        for scans in 1...(scanEnds.count - 1) {
            #expect(await waitUntil { previewScans(view.displayed) == scans }, "preview of \(scans) scans")
            // Previews are in no cache.
            #expect(setup.manager.cachedImage(for: setup.url) == nil)
            #expect(setup.manager.memoryCache.totalCost == 0)
            setup.gate.release()
        }
        let image = try ImageDecoder().decodeImage(setup.body)
        #expect(await waitUntil { recorder.contents.last == .image(image) && recorder.callbacks.last == .imageSet(image, .network) })

        // placeholder → previews of 1, 2, … 9 scans → the image, each preview shown once, in order.
        var kinds: [String] = []
        for content in recorder.contents {
            let kind: String
            switch content {
            case .placeholder(let shown): kind = shown == placeholder ? "placeholder" : "other placeholder"
            case .preview(let preview): kind = "preview \(preview.preview?.completedScans ?? 0)"
            case .image(let shown): kind = shown == image ? "image" : "other image"
            case .empty, .failure: kind = "\(content)"
            }
            if kinds.last != kind { kinds.append(kind) }
        }
        #expect(kinds == ["placeholder"] + (1...9).map { "preview \($0)" } + ["image"])
        // The preview count is the scans completed before the end: one per scan seen.
        #expect(Set(recorder.contents.compactMap(previewScans)).count == scanEnds.count - 1)
        // The final image is no preview; the caches hold it and the bytes, nothing else.
        #expect(view.displayed.loadedImage?.isPreview == false)
        #expect(setup.manager.cachedImage(for: setup.url) == image)
        #expect(setup.manager.memoryCache.count == 1)
        #expect(await waitUntil { setup.manager.fileCache?.statistics.count == 1 })
        let stored = try #require(setup.manager.fileCache?.entry(forKey: ObjectRequest(url: setup.url).dataKey))
        #expect(try Data(contentsOf: stored.fileURL) == setup.body)
        #expect(recorder.callbacks.filter { if case .imageSet = $0 { true } else { false } } == [.imageSet(image, .network)])
    }

    @Test func aLongIntervalShowsFewerPreviews() async throws {
        let setup = try setUp(previewInterval: 3600)
        let view = ManagedImageView(manager: setup.manager)
        let recorder = ViewRecorder(view)
        view.load(url: setup.url)
        #expect(await waitUntil { previewScans(view.displayed) == 1 })
        setup.gate.releaseAll()
        let image = try ImageDecoder().decodeImage(setup.body)
        #expect(await waitUntil { recorder.contents.last == .image(image) })
        // Within the hour only the first scan was shown; the image replaced it.
        #expect(Set(recorder.contents.compactMap(previewScans)) == [1])
    }

    @Test func aViewThatDoesNotShowPreviewsGetsNone() async throws {
        let setup = try setUp()
        let view = ManagedImageView(manager: setup.manager)
        view.showsPreviews = false
        let recorder = ViewRecorder(view)
        view.load(url: setup.url)
        #expect(await waitUntil { setup.gate.piecesSent == 1 })
        setup.gate.releaseAll()
        let image = try ImageDecoder().decodeImage(setup.body)
        #expect(await waitUntil { recorder.contents.last == .image(image) })
        #expect(recorder.contents.compactMap(previewScans).isEmpty)
    }

    @Test func aFailedLoadLeavesNoPreviewBehind() async throws {
        let setup = try setUp()
        let view = ManagedImageView(manager: setup.manager)
        let recorder = ViewRecorder(view)
        view.load(url: setup.url)
        #expect(await waitUntil { previewScans(view.displayed) == 1 })
        setup.gate.release()
        #expect(await waitUntil { previewScans(view.displayed) == 2 })
        setup.server.stop()  // the connection closes short of the announced length
        #expect(await waitUntil { if case .failure = view.displayed { true } else { false } })
        #expect(view.displayed == .failure(nil))
        #expect(!view.isActivityIndicatorVisible)
        // Nothing after the failure is a preview, and nothing was cached.
        let afterFailure = recorder.contents.drop { if case .failure = $0 { false } else { true } }
        #expect(afterFailure.allSatisfy { previewScans($0) == nil })
        #expect(setup.manager.cachedImage(for: setup.url) == nil)
    }

    @Test func aCancelledLoadShowsThePlaceholderNotThePreview() async throws {
        let setup = try setUp()
        let placeholder = try ImageDecoder().decodeImage(ProgressiveScanDetectorTests.fixture("rgba.png"))
        let view = ManagedImageView(manager: setup.manager)
        view.placeholder = placeholder
        view.load(url: setup.url)
        #expect(await waitUntil { previewScans(view.displayed) == 1 })
        setup.manager.cancelAll()
        #expect(await waitUntil { view.displayed == .placeholder(placeholder) })
        #expect(!view.isActivityIndicatorVisible)
        setup.gate.releaseAll()
    }

    @Test func clearingTheViewDropsItsPreview() async throws {
        let setup = try setUp()
        let view = ManagedImageView(manager: setup.manager)
        view.load(url: setup.url)
        #expect(await waitUntil { previewScans(view.displayed) == 1 })
        view.clear()
        #expect(view.displayed == .empty)
        setup.gate.releaseAll()
    }
}
#endif
