#if !(canImport(UIKit) && !os(watchOS))
import ManagedCache
import ManagedCacheUIKit
import ManagedCacheLocking

/// A `ManagedImageViewDelegate` that records what it is told.
final class RecordingDelegate: ManagedImageViewDelegate {
    enum Entry: Sendable, Equatable {
        case imageSet(DecodedImage, DataOrigin)
        case failed(ManagedCacheError)
        case cancelled(ManagedCacheError.CancellationReason)
        case progress(LoadProgress)
        case tapped
    }

    private let recorded = Lock<[Entry]>([])

    var entries: [Entry] { recorded.withLock { $0 } }

    private func append(_ entry: Entry) { recorded.withLock { $0.append(entry) } }

    func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin) {
        append(.imageSet(image, origin))
    }

    func managedImageView(_ view: ManagedImageView, didFailWith error: ManagedCacheError) {
        append(.failed(error))
    }

    func managedImageView(_ view: ManagedImageView, wasCancelledBecause reason: ManagedCacheError.CancellationReason) {
        append(.cancelled(reason))
    }

    func managedImageView(_ view: ManagedImageView, didReceive progress: LoadProgress) {
        append(.progress(progress))
    }

    func managedImageViewWasTapped(_ view: ManagedImageView) {
        append(.tapped)
    }
}
#endif
