#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import ManagedCache
import ManagedCacheUIKit
import Testing
import TestSupport

/// UIImageView+Cached's `loadFromURL(_:afterDelay:)`. Delayed loads of headless views start on one
/// serial queue in deadline order, so a later-scheduled view's load proves an earlier one had its turn.
@Suite struct DelayedLoadTests {
    @Test func theLoadStartsAfterTheDelayWithThePlaceholderShownMeanwhile() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 1)
        let manager = makeImageManager(loader: loader)
        let placeholder = try decodedPNG(seed: 99)
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)
        view.placeholder = placeholder

        let start = DispatchTime.now().uptimeNanoseconds
        view.loadFromURL(ScriptedDataLoader.url("a"), afterDelay: 0.05)
        #expect(await waitUntil { loader.requestCount("a") == 1 })
        // A timer never fires early, so this bound holds however slow the machine is.
        #expect(DispatchTime.now().uptimeNanoseconds - start >= 50_000_000)
        #expect(await waitUntil { recorder.contents.last == .image(image) })
        // The placeholder (set before), the spinner while loading, then the image.
        let displays = recorder.displays
        #expect(displays.first == ImageViewDisplay(content: .placeholder(placeholder)))
        #expect(displays.last == ImageViewDisplay(content: .image(image), transition: .fade))
        #expect(
            displays.dropFirst().dropLast().allSatisfy {
                $0.content == .placeholder(placeholder) && $0.isActivityIndicatorVisible
            })
    }

    @Test func clearingOrLoadingAnotherURLFirstCancelsTheDelayedLoad() async throws {
        let loader = ScriptedDataLoader()
        for (index, path) in ["cleared", "replaced", "renamed", "other", "marker"].enumerated() {
            try scriptPNG(loader, path, seed: index)
        }
        let manager = makeImageManager(loader: loader)
        // Each load is cancelled right after it is scheduled; its delay only has to outlast the
        // next statement, on a machine that may preempt this thread between the two (10 ms did
        // not, once, beside two test runs): a second.
        let cleared = ManagedImageView(manager: manager)
        cleared.loadFromURL(ScriptedDataLoader.url("cleared"), afterDelay: 1)
        cleared.clear()
        let replaced = ManagedImageView(manager: manager)
        replaced.loadFromURL(ScriptedDataLoader.url("replaced"), afterDelay: 1)
        replaced.load(url: ScriptedDataLoader.url("other"))
        let renamed = ManagedImageView(manager: manager)
        renamed.loadFromURL(ScriptedDataLoader.url("renamed"), afterDelay: 1)
        renamed.url = ScriptedDataLoader.url("other")

        // A load scheduled later on the same serial queue: once it ran, the others had their turn.
        let marker = ManagedImageView(manager: manager)
        marker.loadFromURL(ScriptedDataLoader.url("marker"), afterDelay: 1.1)
        #expect(await waitUntil { marker.displayed.loadedImage != nil })

        #expect(loader.requestCount("cleared") == 0)
        #expect(loader.requestCount("replaced") == 0)
        #expect(loader.requestCount("renamed") == 0)
        #expect(cleared.displayed == .empty)
        #expect(replaced.displayed.loadedImage != nil)
        #expect(renamed.displayed == .empty, "a new URL set without manage() waits for manage()")
    }

    @Test func anImageAlreadyInMemoryIsShownAtOnce() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 1)
        let manager = makeImageManager(loader: loader)
        let url = ScriptedDataLoader.url("a")
        _ = try await manager.image(for: url)

        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)
        view.loadFromURL(url, afterDelay: 60)
        #expect(recorder.displays == [ImageViewDisplay(content: .image(image))])
    }
}
#endif
