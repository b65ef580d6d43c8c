#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import ManagedCache
import ManagedCacheUIKit
import Testing
import TestSupport

/// What a headless `ManagedImageView` displays while loading, on a hit, on failure.
@Suite struct ImageViewDisplayTests {
    @Test func thePlaceholderAndSpinnerShowWhileLoadingThenTheImage() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 1, held: true)
        let manager = makeImageManager(loader: loader)
        let placeholder = try decodedPNG(seed: 99)
        let view = ManagedImageView(manager: manager)
        view.placeholder = placeholder
        let recorder = ViewRecorder(view)

        view.load(url: ScriptedDataLoader.url("a"))
        // The first display is the placeholder with the spinner (progress may already be in it:
        // the held load sends its first bytes at once).
        #expect(recorder.displays.first?.content == .placeholder(placeholder))
        #expect(recorder.displays.first?.isActivityIndicatorVisible == true)
        #expect(view.isActivityIndicatorVisible)
        loader.release("a")
        #expect(await waitUntil { recorder.contents.last == .image(image) && recorder.callbacks.last == .imageSet(image, .network) })

        let displays = recorder.displays
        #expect(
            displays.last == ImageViewDisplay(content: .image(image), transition: .fade), "it arrived after the placeholder: it fades in")
        #expect(displays.dropLast().allSatisfy { $0.content == .placeholder(placeholder) && $0.isActivityIndicatorVisible })
        #expect(!view.isActivityIndicatorVisible)
        #expect(recorder.callbacks.last == .imageSet(image, .network))
    }

    @Test func aMemoryHitIsDisplayedInsideTheCallWithNoPlaceholderFirst() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 1)
        let manager = makeImageManager(loader: loader)
        let url = ScriptedDataLoader.url("a")
        let first = ManagedImageView(manager: manager)
        first.load(url: url)
        #expect(await waitUntil { first.displayed == .image(image) })

        for useURLProperty in [false, true] {
            let view = ManagedImageView(manager: manager)
            view.placeholder = try decodedPNG(seed: 99)
            let recorder = ViewRecorder(view)
            if useURLProperty {
                view.url = url
                view.manage()
            } else {
                view.load(url: url)
            }
            // No waiting: the hit was shown before the call returned, and it was the only display.
            #expect(recorder.displays == [ImageViewDisplay(content: .image(image))])
            #expect(recorder.callbacks == [.imageSet(image, .memory)])
        }
        #expect(loader.requestCount("a") == 1)
    }

    @Test func progressIsDisplayedAndReportedWhileBytesArrive() async throws {
        let loader = ScriptedDataLoader()
        try scriptPNG(loader, "a", seed: 1, held: true)
        let total = pngBytes(seed: 1).count
        let manager = makeImageManager(loader: loader)
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)

        view.load(url: ScriptedDataLoader.url("a"))
        // The response's 0-byte progress may be displayed first: wait for the held half (the
        // load cannot pass it until released), and for its callback, which the view delivers
        // after it renders.
        let expected = LoadProgress(receivedBytes: total / 2, expectedBytes: total)
        #expect(await waitUntil { view.progress == expected })
        #expect(await waitUntil { recorder.callbacks.last == .progress(expected) })
        #expect(view.progress == expected)
        #expect(view.isActivityIndicatorVisible)
        #expect(view.displayed == .empty, "no placeholder set: nothing but the spinner")
        // The engine reports the response (0 bytes of `total`) and then the first chunk.
        #expect(recorder.callbacks.last == .progress(expected))
        #expect(recorder.callbacks.allSatisfy { if case .progress = $0 { true } else { false } })
        #expect(recorder.displays.last?.progress == expected)
        loader.release("a")
        #expect(await waitUntil { recorder.contents.last?.loadedImage != nil })
        #expect(view.progress == nil)
    }

    @Test func aFailureShowsTheFailureImageAndReportsTheTypedError() async throws {
        let loader = ScriptedDataLoader()
        loader.script("missing", .failure(.httpStatus(code: 404)))
        let manager = makeImageManager(loader: loader)
        let failureImage = try decodedPNG(seed: 404)
        let view = ManagedImageView(manager: manager)
        view.failureImage = failureImage
        let recorder = ViewRecorder(view)
        let delegate = RecordingDelegate()
        view.delegate = delegate

        view.load(url: ScriptedDataLoader.url("missing"))
        #expect(await waitUntil { recorder.contents.last == .failure(failureImage) && !recorder.callbacks.isEmpty })
        #expect(!view.isActivityIndicatorVisible)
        #expect(recorder.callbacks == [.failed(.httpStatus(code: 404))])
        #expect(delegate.entries == [.failed(.httpStatus(code: 404))])
    }

    @Test func corruptBytesFailAsDecodingFailed() async throws {
        let loader = ScriptedDataLoader()
        let bytes = pngBytes(seed: 1)
        loader.script("cut", .body(bytes.prefix(bytes.count / 2)))
        let manager = makeImageManager(loader: loader)
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)

        view.load(url: ScriptedDataLoader.url("cut"))
        #expect(
            await waitUntil {
                recorder.contents.last == .failure(nil)
                    && recorder.callbacks.last.map { if case .failed = $0 { true } else { false } } == true
            })
        guard case .failed(.decodingFailed) = recorder.callbacks.last else {
            Issue.record("expected decodingFailed, got \(recorder.callbacks)")
            return
        }
    }

    @Test func settingThePlaceholderOnAnIdleViewShowsIt() throws {
        let view = ManagedImageView(manager: makeImageManager(loader: ScriptedDataLoader()))
        let recorder = ViewRecorder(view)
        let placeholder = try decodedPNG(seed: 3)
        view.placeholder = placeholder
        #expect(recorder.contents == [.placeholder(placeholder)])
        view.placeholder = nil
        #expect(recorder.contents == [.placeholder(placeholder), .empty])
    }
}
#endif
