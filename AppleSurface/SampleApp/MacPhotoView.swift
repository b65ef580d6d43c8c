#if canImport(AppKit) && !canImport(UIKit)
// The sample app's macOS part: the AppKit `ManagedImageView` as a Mac app uses it, type-checked
// by `.ci/apple-surface-check` against the AppKit stand-in in Swift 6 mode.
import AppKit
import ManagedCache
import ManagedCacheUIKit

/// A grid cell's content view: one managed image view, reused for another photo.
@MainActor
final class MacPhotoView: NSView, ManagedImageViewDelegate {
    let photoView = ManagedImageView(frame: .zero, manager: .defaultImageManager)
    private(set) var taps = 0

    override init(frame frameRect: NSRect) {
        super.init(frame: frameRect)
        photoView.frame = bounds
        photoView.autoresizingMask = [.width, .height]
        photoView.scaleMode = .aspectFill
        photoView.transition = .fade
        photoView.delegate = self
        photoView.onFailure = { error in print("failed: \(error)") }
        addSubview(photoView)
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    /// Shows another photo: the previous one is never shown again.
    func show(photoURL: URL, label: String) {
        photoView.clear()
        photoView.setAccessibilityLabel(label)
        photoView.load(url: photoURL)
    }

    func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin) {
        print("shown from \(origin), \(image.pixelWidth)×\(image.pixelHeight)")
    }

    func managedImageViewWasTapped(_ view: ManagedImageView) {
        taps += 1
    }
}
#endif
