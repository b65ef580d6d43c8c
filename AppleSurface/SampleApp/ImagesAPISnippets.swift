#if canImport(UIKit) && !os(watchOS)
import ManagedCache
import ManagedCacheUIKit
import UIKit

// Storing your own objects, transitions and processors from UIKit, as an app writes them
// (the images article, ManagedCacheUIKit.docc/ImagesAndFormats.md, shows the same calls in its
// "Processors", "Transitions" and "Storing images the app made" sections; `.ci/docs-check`
// type-checks the article's copies against these stand-ins).

/// "Store your own object under a key": an edited avatar shown and stored, a note built offline.
@MainActor
func imagesAPIStoreSnippet(
    manager: ObjectManager, avatarView: ManagedImageView, edited: UIImage, userID: Int, avatarURL: URL
) async throws {
    // Show the edited picture now; every later load of the oid (any view, any URL) is a memory hit.
    if let image = DecodedImage(uiImage: edited) {
        avatarView.setImage(image, oid: "avatar-\(userID)", url: avatarURL, toFileCache: true)
    }

    // Any object, with the decoder whose key it goes under; JSON and Data encode for the file cache.
    struct Note: Codable, Sendable {
        var title: String
    }
    let note = Note(title: "Written offline")
    try await manager.store(note, for: ObjectRequest(oid: "note-1"), decoder: JSONObjectDecoder<Note>(), toFileCache: true)
    manager.store(Data("raw".utf8), for: ObjectRequest(oid: "blob-1"), decoder: DataDecoder()) { result in
        if case .failure(let error) = result { print("not on disk: \(error)") }
    }
}

/// "Transitions": the default cross-fade, a slower one, or none.
@MainActor
func imagesAPITransitionSnippet(photoView: ManagedImageView, avatarView: ManagedImageView, url: URL) {
    photoView.transition = .crossDissolve(duration: 0.4)  // default .fade (0.25 s); memory hits never animate
    avatarView.transition = .none
    photoView.load(url: url)
    photoView.onImageSet = { image, origin in print("\(image) from \(origin)") }
}

/// "Processors": a circular avatar format, a blurred backdrop, a chain.
@MainActor
func imagesAPIProcessorsSnippet(avatarView: ManagedImageView, backdropView: ManagedImageView, manager: ObjectManager, url: URL) async throws
{
    let avatar = ImageCacheFormat(
        name: "avatar", size: PixelSize(width: 120, height: 120), processors: [CircleImageProcessor()])
    avatarView.format = avatar
    backdropView.processors = [BlurImageProcessor(radius: 12)]

    let banner = ResizeImageProcessor(size: PixelSize(width: 800, height: 400))
        .then(CropImageProcessor(size: PixelSize(width: 800, height: 300), anchor: .top))
        .then(RoundedCornersImageProcessor(radius: 24))
    let image = try await manager.object(for: ObjectRequest(url: url), decoder: ImageDecoder(processors: [banner]))
    print(image.transformations)
}
#endif
