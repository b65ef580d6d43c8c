import Foundation
import ManagedCache
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// A view or model given a manager of its own never makes `ObjectManager.defaultImageManager`
/// (which opens a `BigFileCache` in the user's caches directory and a URL session). No test in
/// this process uses the default manager, so it must never have been made.
@Suite struct DefaultImageManagerTests {
    @MainActor @Test func viewsAndModelsGivenAManagerNeverMakeTheDefaultOne() async throws {
        let loader = ScriptedDataLoader()
        let image = try scriptPNG(loader, "a", seed: 1)
        let manager = makeImageManager(loader: loader)

        #if !(canImport(UIKit) && !os(watchOS))
        let view = ManagedImageView(manager: manager)
        view.load(url: ScriptedDataLoader.url("a"))
        #expect(await waitUntil { view.displayed == .image(image) })
        view.manager = makeImageManager(loader: loader)
        view.clear()
        #endif

        let model = ManagedImageModel(manager: manager, scaleMode: .aspectFit)
        model.load(url: ScriptedDataLoader.url("a"))
        model.layoutChanged(width: 4, height: 3, scale: 2)
        model.appear()
        let inputs = ManagedImageInputs(
            url: ScriptedDataLoader.url("a"), oid: nil, priority: .normal, format: nil, scaleMode: .aspectFill,
            transition: .fade, manager: manager)
        let viewModel = ManagedImageModel(inputs: inputs)
        viewModel.apply(inputs)
        #expect(await waitOnMainActor { model.phase.image != nil })

        #expect(!ObjectManager.hasMadeDefaultImageManager)
    }
}
