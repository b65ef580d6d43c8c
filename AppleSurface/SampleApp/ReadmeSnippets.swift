#if canImport(UIKit) && !os(watchOS)
import ManagedCache
import ManagedCacheUIKit
import SwiftUI
import UIKit

// UIKit and SwiftUI calls as an app writes them: an image view with its callbacks, a cell, the
// completion and cached-image APIs, SwiftUI's ManagedImage. (The README's, the articles' and the
// doc comments' snippets themselves are type-checked against the same stand-ins by
// `.ci/docs-check`.)
@MainActor
func readmeImageViewSnippet(avatarURL: URL, placeholderImage: DecodedImage?, brokenImage: DecodedImage?) {
    let view = ManagedImageView()  // uses ObjectManager.defaultImageManager unless given one
    view.placeholder = placeholderImage
    view.failureImage = brokenImage
    view.onImageSet = { image, origin in print("\(image.pixelWidth)×\(image.pixelHeight) from \(origin)") }
    view.load(url: avatarURL, oid: "user-42-avatar")  // a memory hit shows at once, with no placeholder flash
    // in prepareForReuse:
    view.clear()  // never shows the previous image again
    view.loadFromURL(avatarURL, afterDelay: 0.3)
}

/// ManagedImageView's doc comment: a placeholder from a `UIImage`, a load in `cellForRowAt`.
final class DocCommentCell: UITableViewCell {
    let photoView = ManagedImageView()

    func configure(photoURL: URL) {
        if let grey = UIImage(named: "grey") {
            photoView.placeholder = DecodedImage(uiImage: grey)
        }
        photoView.load(url: photoURL)
    }

    override func prepareForReuse() {
        super.prepareForReuse()
        photoView.clear()
    }
}

/// JMImageCache's "return the image now if cached, else call back" (README), from a view.
@MainActor
func readmeImageForURLSnippet(manager: ObjectManager, url: URL, into imageView: UIImageView) {
    if let image = manager.image(
        for: url,
        onMainActor: { result in
            if case .success(let image) = result { imageView.image = image.uiImage() }
        })
    {
        imageView.image = image.uiImage()
    }
    if let cached = manager.cachedImage(for: url) {
        imageView.image = cached.uiImage()
    }
}

/// The README's SwiftUI snippet ("Images: `ManagedCacheUIKit`"), as written there.
struct ReadmeSwiftUISnippet: View {
    let avatarURL: URL
    let coverURL: URL

    var body: some View {
        ZStack {
            ManagedImage(url: avatarURL)  // the image filling the view, a progress indicator while it loads
                .frame(width: 44, height: 44)
            ManagedImage(url: coverURL, priority: .high) { phase in
                if let image = phase.image?.uiImage() { Image(uiImage: image).resizable() } else { Color.secondary }
            }
        }
    }
}
#endif
