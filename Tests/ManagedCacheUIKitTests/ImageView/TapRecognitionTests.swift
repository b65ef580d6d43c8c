import Foundation
import ManagedCache
import ManagedCacheUIKit
import TestSupport
import Testing

/// An image view listens for taps only while something wants them, so an image in a
/// table or collection view cell does not swallow row selection.
@Suite struct TapRecognitionTests {
    @Test func aViewListensForTapsOnlyWhileAHandlerOrADelegateWantsThem() {
        let view = ManagedImageView(manager: makeImageManager(loader: ScriptedDataLoader()))
        #expect(!view.listensForTaps)

        view.onTap = {}
        #expect(view.listensForTaps)
        view.onTap = nil
        #expect(!view.listensForTaps)

        var delegate: RecordingDelegate? = RecordingDelegate()
        view.delegate = delegate
        #expect(view.listensForTaps)
        // The delegate is held weakly: once it is gone nothing wants taps any more.
        delegate = nil
        #expect(view.delegate == nil)
        #expect(!view.listensForTaps)
    }
}
