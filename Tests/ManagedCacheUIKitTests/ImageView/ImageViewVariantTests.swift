import Foundation
import ManagedCache
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// A size change that needs another variant (a rotation, a self-sizing cell): the image on screen
/// stays, with no placeholder, spinner or transition, until the new size's variant replaces it at
/// once. The decision is `ImageViewState`'s, which both image views run.
@Suite struct ImageViewVariantTests {
    let manager = makeImageManager(loader: ScriptedDataLoader())
    let url = ScriptedDataLoader.url("photo")
    let small = ImageCacheFormat(name: "view-100×100-aspectFill", size: PixelSize(width: 100, height: 100))
    let large = ImageCacheFormat(name: "view-200×200-aspectFill", size: PixelSize(width: 200, height: 200))

    /// A state showing `image` for `url`, loaded at `small`, after the shell rendered the spinner
    /// (so a later image would fade in).
    func stateShowing(_ image: DecodedImage, placeholder: DecodedImage? = nil) throws -> ImageViewState {
        var state = ImageViewState(manager: manager)
        _ = state.setPlaceholder(placeholder)
        state.setURL(url)
        _ = state.prepareManage(fallbackFormat: small)
        state.noteRendered()
        let request = try #require(state.active?.request)
        let taken = state.receiveImage(image, origin: .network, for: request)
        #expect(taken)
        #expect(state.display == ImageViewDisplay(content: .image(image), transition: .fade))
        state.noteRendered()
        while state.nextEvent() != nil {}
        return state
    }

    @Test func theImageStaysWithoutPlaceholderOrSpinnerThenTheNewVariantReplacesItAtOnce() throws {
        let shown = try decodedPNG(width: 8, height: 6, seed: 1)
        let sharper = try decodedPNG(width: 16, height: 12, seed: 1)
        let placeholder = try decodedPNG(seed: 99)
        var state = try stateShowing(shown, placeholder: placeholder)
        let version = state.displayVersion

        let commands = state.prepareManage(fallbackFormat: large)
        #expect(commands.manage === manager, "the view is managed for the new variant")
        #expect(commands.unmanage == nil, "`manage` detaches the old variant itself")
        #expect(state.active?.decoder.identifier == ImageDecoder(format: large).identifier)
        #expect(state.replacesVariant)
        // Nothing changes on screen: no placeholder, no spinner, no new display at all.
        #expect(state.displayVersion == version)
        #expect(state.display == ImageViewDisplay(content: .image(shown), transition: .fade))

        // Progress and previews of the new variant are not shown over the image.
        let request = try #require(state.active?.request)
        let progressTaken = state.receiveProgress(LoadProgress(receivedBytes: 10, expectedBytes: 100), for: request)
        let previewTaken = state.receivePreview(try decodedPNG(seed: 7), for: request)
        #expect(!progressTaken && !previewTaken)
        #expect(state.displayVersion == version)

        // The new variant replaces the image at once, and is announced.
        let taken = state.receiveImage(sharper, origin: .network, for: request)
        #expect(taken)
        #expect(state.display == ImageViewDisplay(content: .image(sharper), transition: .none))
        #expect(!state.replacesVariant)
        guard case .imageSet(let announced, .network) = state.nextEvent() else {
            Issue.record("the new variant is announced with onImageSet")
            return
        }
        #expect(announced == sharper)
    }

    @Test func aNewVariantThatFailsKeepsTheImageAndReportsNothing() throws {
        let shown = try decodedPNG(seed: 1)
        for error in [ManagedCacheError.httpStatus(code: 500), .cancelled(.loadingBufferOverflow)] {
            var state = try stateShowing(shown)
            let version = state.displayVersion
            _ = state.prepareManage(fallbackFormat: large)
            let request = try #require(state.active?.request)
            let taken = state.receiveFailure(error, for: request)
            #expect(!taken)
            #expect(state.displayVersion == version)
            #expect(state.display.content == .image(shown))
            let event = state.nextEvent()
            #expect(event == nil, "no failure or cancellation is reported for the image on screen")
            #expect(!state.replacesVariant)
            #expect(state.active?.decoder.identifier == ImageDecoder(format: small).identifier, "back on the variant on screen")
            // Managing for the new size again tries again, still without blanking.
            _ = state.prepareManage(fallbackFormat: large)
            #expect(state.replacesVariant)
            #expect(state.displayVersion == version)
        }
    }

    @Test func anotherURLOrAnotherFormatOfTheAppsStillBlanks() throws {
        let shown = try decodedPNG(seed: 1)
        var state = try stateShowing(shown)
        state.setURL(ScriptedDataLoader.url("other"))
        _ = state.prepareManage(fallbackFormat: large)
        #expect(!state.replacesVariant)
        #expect(state.display == ImageViewDisplay(content: .empty, isActivityIndicatorVisible: true), "another image: never the old one")

        var formatted = try stateShowing(shown)
        formatted.format = large
        _ = formatted.prepareManage(fallbackFormat: nil)
        #expect(!formatted.replacesVariant, "the app's own format is another image kind: loaded as a new load")
        #expect(formatted.display.isActivityIndicatorVisible)
    }

    @Test func whileLoadingTheFirstImageANewSizeLoadsTheNewVariantInstead() throws {
        var state = ImageViewState(manager: manager)
        state.setURL(url)
        _ = state.prepareManage(fallbackFormat: small)
        _ = state.prepareManage(fallbackFormat: large)
        #expect(!state.replacesVariant, "nothing on screen to keep")
        #expect(state.active?.decoder.identifier == ImageDecoder(format: large).identifier)
        #expect(state.display.isActivityIndicatorVisible)
    }

    #if !(canImport(UIKit) && !os(watchOS))
    /// The same through the headless view's core and a manager: across the reload no display
    /// shows the placeholder or the spinner.
    @Test func theViewNeverShowsThePlaceholderOrSpinnerWhileItsNewVariantLoads() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "photo", seed: 1)
        let manager = makeImageManager(loader: loader)
        let view = ManagedImageView(manager: manager)
        view.placeholder = try decodedPNG(seed: 99)
        view.url = url
        view.model.manage(fallbackFormat: small)
        #expect(await waitUntil { view.displayed == .image(image) })
        let recorder = ViewRecorder(view)

        try scriptPNG(loader, "photo", seed: 1, held: true)
        view.model.manage(fallbackFormat: large)
        #expect(view.objectDecoder.identifier == ImageDecoder(format: large).identifier)
        #expect(view.displayed == .image(image) && !view.display.isActivityIndicatorVisible, "unchanged")
        loader.release("photo")
        #expect(
            await waitUntil {
                !view.model.replacesVariant
            })
        #expect(recorder.displays.allSatisfy { $0.content == .image(image) && !$0.isActivityIndicatorVisible && $0.transition == .none })
        #expect(view.displayed == .image(image))
    }
    #endif
}
