#if !(canImport(UIKit) && !os(watchOS))
import Foundation
import ManagedCache
import ManagedCacheUIKit
import Testing
import TestSupport

/// Cell reuse: a view given another URL, or cleared, never shows what it showed or loaded before.
@Suite struct ImageViewReuseTests {
    @Test func aReusedViewNeverShowsThePreviousImageEvenWhenItsLoadCompletesLater() async throws {
        let loader = ScriptedDataLoader()
        let old = try scriptPNG(loader, "old", seed: 1, held: true)
        let new = try scriptPNG(loader, "new", seed: 2, held: true)
        let manager = makeImageManager(loader: loader)
        let oldURL = ScriptedDataLoader.url("old")
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)

        view.load(url: oldURL)
        view.load(url: ScriptedDataLoader.url("new"))
        loader.release("old")
        // The old load finishes into the cache (the default policy finishes loads without users)...
        #expect(await waitUntil { manager.cachedImage(for: oldURL) == old })
        // ...and the view never showed or reported it.
        #expect(!recorder.shownImages.contains(old))
        #expect(view.displayed == .empty && view.isActivityIndicatorVisible)
        loader.release("new")
        #expect(await waitUntil { recorder.contents.last == .image(new) })
        #expect(recorder.shownImages == [new])
        #expect(!recorder.callbacks.contains(.imageSet(old, .network)))
    }

    @Test func aViewShowingAnImageDropsItAtOnceWhenGivenAnotherURL() async throws {
        let loader = ScriptedDataLoader()
        let old = try scriptPNG(loader, "old", seed: 1)
        try scriptPNG(loader, "new", seed: 2, held: true)
        let manager = makeImageManager(loader: loader)
        let placeholder = try decodedPNG(seed: 99)
        let view = ManagedImageView(manager: manager)
        view.placeholder = placeholder
        // Every callback of the first load delivered (the image set is its last) before recording.
        let firstLoad = ViewRecorder(view)
        view.load(url: ScriptedDataLoader.url("old"))
        #expect(await waitUntil { firstLoad.callbacks.last == .imageSet(old, .network) })

        let recorder = ViewRecorder(view)
        view.load(url: ScriptedDataLoader.url("new"))
        #expect(view.displayed == .placeholder(placeholder))
        #expect(recorder.contents.first == .placeholder(placeholder))
        loader.release("new")
        #expect(await waitUntil { recorder.contents.last?.loadedImage != nil })
        #expect(!recorder.shownImages.contains(old))
    }

    @Test func settingTheURLIgnoresTheOldLoadEvenBeforeManaging() async throws {
        let loader = ScriptedDataLoader()
        let old = try scriptPNG(loader, "old", seed: 1, held: true)
        let new = try scriptPNG(loader, "new", seed: 2)
        let manager = makeImageManager(loader: loader)
        let oldURL = ScriptedDataLoader.url("old")
        let view = ManagedImageView(manager: manager)
        let recorder = ViewRecorder(view)

        view.load(url: oldURL)
        view.url = ScriptedDataLoader.url("new")
        loader.release("old")
        #expect(await waitUntil { manager.cachedImage(for: oldURL) == old })
        #expect(recorder.shownImages.isEmpty)
        #expect(recorder.callbacks.allSatisfy { if case .progress = $0 { true } else { false } })
        view.manage()
        #expect(await waitUntil { recorder.contents.last == .image(new) })
        #expect(recorder.shownImages == [new])
    }

    @Test func clearShowsThePlaceholderAndTheClearedLoadNeverShows() async throws {
        let loader = ScriptedDataLoader()
        let first = try scriptPNG(loader, "first", seed: 1)
        let second = try scriptPNG(loader, "second", seed: 2, held: true)
        let manager = makeImageManager(loader: loader)
        let placeholder = try decodedPNG(seed: 99)
        let view = ManagedImageView(manager: manager)
        view.placeholder = placeholder
        // Every callback of the first load delivered (the image set is its last) before recording.
        let firstLoad = ViewRecorder(view)
        view.load(url: ScriptedDataLoader.url("first"))
        #expect(await waitUntil { firstLoad.callbacks.last == .imageSet(first, .network) })

        view.clear()
        #expect(view.displayed == .placeholder(placeholder))
        #expect(view.url == nil && view.oid == nil)

        let recorder = ViewRecorder(view)
        view.load(url: ScriptedDataLoader.url("second"))
        view.clear()
        loader.release("second")
        #expect(await waitUntil { manager.cachedImage(for: ScriptedDataLoader.url("second")) == second })
        #expect(recorder.shownImages.isEmpty)
        #expect(view.displayed == .placeholder(placeholder) && !view.isActivityIndicatorVisible)
    }

    @Test func managingTheSameRequestAgainChangesNothing() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 1)
        let manager = makeImageManager(loader: loader)
        let view = ManagedImageView(manager: manager)
        // Every callback of the first load delivered (the image set is its last) before recording.
        let firstLoad = ViewRecorder(view)
        view.load(url: ScriptedDataLoader.url("a"))
        #expect(await waitUntil { firstLoad.callbacks.last == .imageSet(image, .network) })
        let recorder = ViewRecorder(view)
        view.manage()
        view.load(url: ScriptedDataLoader.url("a"))
        #expect(recorder.all.isEmpty)
    }

    @Test func viewsOfOneURLShareOneDownloadAndOneImage() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "avatar", seed: 4, held: true)
        let manager = makeImageManager(loader: loader)
        let views = (0..<3).map { _ in ManagedImageView(manager: manager) }
        for view in views { view.load(url: ScriptedDataLoader.url("avatar")) }
        loader.release("avatar")
        #expect(await waitUntil { views.allSatisfy { $0.displayed == .image(image) } })
        #expect(loader.requestCount("avatar") == 1)
        #expect(manager.statistics.decodes == 1)
    }

    @Test func viewsWithDifferentFormatsShareOneDownload() async throws {
        let loader = ScriptedDataLoader()
        try scriptPNG(loader, "photo", seed: 4, held: true)
        let manager = makeImageManager(loader: loader)
        let formats = ["thumb", "large"].map { name in
            ImageCacheFormat(name: name) { $0.addingTransformation(name) }
        }
        let views = formats.map { format in
            let view = ManagedImageView(manager: manager)
            view.format = format
            view.load(url: ScriptedDataLoader.url("photo"))
            return view
        }
        loader.release("photo")
        #expect(await waitUntil { views.allSatisfy { $0.displayed.loadedImage != nil } })
        #expect(views.map { $0.displayed.loadedImage?.transformations ?? [] } == [["thumb"], ["large"]])
        #expect(loader.requestCount("photo") == 1)
    }
}
#endif
