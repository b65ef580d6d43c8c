#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import ManagedCache
import ManagedCacheUIKit
import Testing
import TestSupport

/// Cancellation, taps, the weak delegate and callbacks that call back into the view.
@Suite struct ImageViewCallbackTests {
    @Test func aLoadPushedOutOfTheLoadingBufferReportsCancelledAndRestartsWhenManagedAgain() async throws {
        let loader = ScriptedDataLoader()
        let first = try scriptPNG(loader, "1", seed: 1, held: true)
        try scriptPNG(loader, "2", seed: 2, held: true)
        let manager = makeImageManager(loader: loader, bufferSize: 1)
        let placeholder = try decodedPNG(seed: 99)
        let pushedOut = ManagedImageView(manager: manager)
        pushedOut.placeholder = placeholder
        let recorder = ViewRecorder(pushedOut)
        let delegate = RecordingDelegate()
        pushedOut.delegate = delegate

        pushedOut.load(url: ScriptedDataLoader.url("1"))
        // Let the first chunk's progress arrive, so that nothing is in flight when the load is
        // pushed out (the response's 0-byte progress comes before it: wait for bytes).
        #expect(
            await waitUntil {
                recorder.callbacks.contains { if case .progress(let progress) = $0 { progress.receivedBytes > 0 } else { false } }
            })
        let other = ManagedImageView(manager: manager)
        other.load(url: ScriptedDataLoader.url("2"))

        #expect(recorder.callbacks.last == .cancelled(.loadingBufferOverflow))
        #expect(delegate.entries.last == .cancelled(.loadingBufferOverflow))
        #expect(pushedOut.displayed == .placeholder(placeholder) && !pushedOut.isActivityIndicatorVisible)

        pushedOut.manage()
        #expect(pushedOut.isActivityIndicatorVisible)
        loader.release("1")
        #expect(await waitUntil { recorder.contents.last == .image(first) })
    }

    @Test func theDelegateIsHeldWeakly() throws {
        let view = ManagedImageView(manager: makeImageManager(loader: ScriptedDataLoader()))
        weak var released: RecordingDelegate?
        do {
            let delegate = RecordingDelegate()
            view.delegate = delegate
            released = delegate
            view.tap()
            #expect(delegate.entries == [.tapped])
        }
        #expect(released == nil)
        #expect(view.delegate == nil)
    }

    @Test func aTapCallsOnTapAndTheDelegate() {
        let view = ManagedImageView(manager: makeImageManager(loader: ScriptedDataLoader()))
        let recorder = ViewRecorder(view)
        let delegate = RecordingDelegate()
        view.delegate = delegate
        view.tap()
        #expect(recorder.callbacks == [.tapped])
        #expect(delegate.entries == [.tapped])
    }

    @Test func aCallbackMayClearTheViewFromInside() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 1)
        let manager = makeImageManager(loader: loader)
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)
        view.onImageSet = { [weak view] _, _ in view?.clear() }

        view.load(url: ScriptedDataLoader.url("a"))
        // One snapshot of the displays: the load's own first display is empty too, so two reads
        // could see it last and then the image, before the callback cleared the view.
        #expect(
            await waitUntil {
                let contents = recorder.contents
                return contents.last == .empty && contents.compactMap(\.loadedImage) == [image]
            })
        #expect(view.displayed == .empty && view.url == nil)
    }

    @Test func aDeallocatedViewIsDroppedByTheManager() async throws {
        let loader = ScriptedDataLoader()
        try scriptPNG(loader, "a", seed: 1, held: true)
        let manager = makeImageManager(loader: loader)
        let released = WeakBox<ManagedImageView>(nil)
        do {
            let view = ManagedImageView(manager: manager)
            view.load(url: ScriptedDataLoader.url("a"))
            released.object = view
        }
        // A progress callback in flight on the loading thread may hold the view for a moment.
        #expect(await waitUntil { released.isGone })
        loader.release("a")
        #expect(await waitUntil { manager.activeLoadCount == 0 })
    }
}
#endif
