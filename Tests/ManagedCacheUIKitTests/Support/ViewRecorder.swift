import Foundation
import ManagedCache
import ManagedCacheLocking
import ManagedCacheUIKit

/// Attaches to a headless `ManagedImageView` and records every display-hook call and callback,
/// in order, for tests to assert on.
final class ViewRecorder: Sendable {
    /// One recorded call.
    enum Entry: Sendable, Equatable {
        case display(ImageViewDisplay)
        case imageSet(DecodedImage, DataOrigin)
        case failed(ManagedCacheError)
        case cancelled(ManagedCacheError.CancellationReason)
        case progress(LoadProgress)
        case tapped
    }

    private let entries = Lock<[Entry]>([])

    /// Sets every closure of `view` to record into this recorder.
    init(_ view: ManagedImageView) {
        view.displayHook = { [weak self] in self?.append(.display($0)) }
        view.onImageSet = { [weak self] in self?.append(.imageSet($0, $1)) }
        view.onFailure = { [weak self] in self?.append(.failed($0)) }
        view.onCancelled = { [weak self] in self?.append(.cancelled($0)) }
        view.onProgress = { [weak self] in self?.append(.progress($0)) }
        view.onTap = { [weak self] in self?.append(.tapped) }
    }

    private func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    /// Everything recorded so far.
    var all: [Entry] { entries.withLock { $0 } }

    /// The display-hook calls, in order.
    var displays: [ImageViewDisplay] {
        all.compactMap { if case .display(let display) = $0 { return display } else { return nil } }
    }

    /// What each display-hook call showed, in order.
    var contents: [DisplayedContent] { displays.map(\.content) }

    /// Every image any display-hook call showed as the loaded image.
    var shownImages: [DecodedImage] { contents.compactMap(\.loadedImage) }

    /// Callbacks other than display changes, in order.
    var callbacks: [Entry] {
        all.filter { if case .display = $0 { return false } else { return true } }
    }

    /// Forgets what was recorded.
    func reset() { entries.withLock { $0.removeAll() } }
}
