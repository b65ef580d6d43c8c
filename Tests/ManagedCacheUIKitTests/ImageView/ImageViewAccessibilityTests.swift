import Foundation
import ManagedCache
import ManagedCacheUIKit
import TestSupport
import Testing

/// The view's accessibility value follows its state (the app sets the label).
@Suite struct ImageViewAccessibilityTests {
    @Test func theValueSaysLoadingThenNothingOnceTheImageShows() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 4, held: true)
        let view = ManagedImageView(manager: makeImageManager(loader: loader))
        #expect(view.display.accessibilityValue == nil)

        view.load(url: ScriptedDataLoader.url("a"))
        // "Loading", then "Loading, 50 percent" once half the bytes are in (either may be seen first).
        #expect(await waitUntil { view.display.accessibilityValue?.hasPrefix("Loading") == true })
        loader.release("a")
        #expect(await waitUntil { view.displayed == .image(image) })
        #expect(view.display.accessibilityValue == nil)
    }

    @Test func theValueSaysFailedAfterAFailure() async {
        let loader = ScriptedDataLoader()
        loader.script("gone", .failure(.httpStatus(code: 410)))
        let view = ManagedImageView(manager: makeImageManager(loader: loader))
        view.load(url: ScriptedDataLoader.url("gone"))
        #expect(await waitUntil { view.display.accessibilityValue == "Failed to load" })
    }

    @Test func progressIsSpokenInWholePercent() {
        let display = ImageViewDisplay(
            content: .empty, isActivityIndicatorVisible: true,
            progress: LoadProgress(receivedBytes: 333, expectedBytes: 1_000))
        #expect(display.accessibilityValue == "Loading, 33 percent")
        #expect(ImageViewDisplay(content: .failure(nil)).accessibilityValue == "Failed to load")
    }
}
