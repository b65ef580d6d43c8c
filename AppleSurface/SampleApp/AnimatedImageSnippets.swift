#if canImport(UIKit) && !os(watchOS)
import ManagedCache
import ManagedCacheUIKit
import QuartzCore
import UIKit

// Animated images and progressive previews from UIKit, as an app writes them (the images article,
// ManagedCacheUIKit.docc/ImagesAndFormats.md, shows the same calls; `.ci/docs-check` type-checks
// the article's copies against these stand-ins).

/// "Animated images": a cell whose image view plays GIF, APNG and WebP, and the app's switch.
final class AnimatedPhotoCell: UITableViewCell {
    let photoView = ManagedImageView()

    func configure(photoURL: URL, autoplay: Bool) {
        ImageAnimation.isEnabled = autoplay  // the app's "Autoplay animations" setting, for every view
        photoView.animatesImages = true  // the default; false shows the first frame in this view only
        photoView.load(url: photoURL)  // plays while on screen; first frame under Reduce Motion
    }

    override func prepareForReuse() {
        super.prepareForReuse()
        photoView.clear()
    }
}

/// "Animated images": a custom view driving its own playhead from a display link's timestamps.
@MainActor
func animationClockSnippet(image: DecodedImage, imageView: UIImageView) -> AnimationClock? {
    guard let animation = image.animation else { return nil }
    var clock = AnimationClock(animation: animation, startTime: CACurrentMediaTime())
    let position = clock.position(at: CACurrentMediaTime())  // frame to show now; late refreshes skip frames
    print(position.frameIndex, position.untilNextFrame ?? 0)
    clock.pause(at: CACurrentMediaTime())  // off screen
    clock.resume(at: CACurrentMediaTime())  // back: carries on where it was
    return clock
}

/// "Progressive previews": on by default in `ManagedImageView`; off for one view.
@MainActor
func progressivePreviewSnippet(photoURL: URL) -> ManagedImageView {
    let view = ManagedImageView()
    view.showsPreviews = true  // the default: a progressive JPEG sharpens scan by scan, then the image
    view.load(url: photoURL)
    return view
}
#endif
