import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking
import ManagedCacheUIKit
import TestSupport
import Testing

// The platform-neutral snippets of the images article (ManagedCacheUIKit.docc/ImagesAndFormats.md,
// "Animated images" and "Progressive JPEG previews"), run here against the loopback server;
// `.ci/docs-check` type-checks the article's own copies. Keep in step with it.

/// "Progressive previews": a user of its own that wants previews.
final class PhotoPreviewUser: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder = ImageDecoder()
    private let shown = Lock<[DecodedImage]>([])

    init(url: URL) { objectRequest = ObjectRequest(url: url) }

    var wantsPreviews: Bool { true }  // default false: no previews are made for this user

    func managedObjectPreview(_ preview: DecodedImage, request: ObjectRequest) {
        show(preview)  // preview.isPreview; preview.preview?.completedScans
    }

    func managedObjectReady(_ image: DecodedImage, origin: DataOrigin, request: ObjectRequest) {
        show(image)  // replaces the last preview
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        print("failed: \(error)")  // no preview stays up as if it were the image
    }

    private func show(_ image: DecodedImage) { shown.withLock { $0.append(image) } }
    var images: [DecodedImage] { shown.withLock { $0 } }
}

@Suite struct ImagesAnimSnippetTests {
    private func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    @Test func animatedImagesSnippet() async throws {
        let server = try LoopbackServer()
        server.setRoute("/party.gif", .ok(try fixture("timed.gif"), contentType: "image/gif"))
        let manager = ObjectManager(configuration: .images())
        let gifURL = server.url("/party.gif")

        // The images article, "Animated images":
        let image = try await manager.image(for: gifURL)
        if let animation = image.animation {
            print(animation.frameCount, animation.frameDurations, animation.loopCount)  // 4 [0.1, 0.1, 0.02, 0.11] times(3)
        }
        var decoder = ImageDecoder()
        decoder.animationBufferByteLimit = 4 << 20  // frames kept per animated image, counted in its cache cost

        #expect(image.animation?.frameCount == 4)
        #expect(image.animation?.loopCount == .times(3))
        #expect(decoder.animationBufferByteLimit == 4 << 20)
    }

    @Test func progressivePreviewsSnippet() async throws {
        let server = try LoopbackServer()
        let body = try fixture("progressive.jpg")
        let gate = BodyGate(breaks: [297])  // the first scan, then the rest
        server.setRoute("/photo.jpg", .ok(body, contentType: "image/jpeg").behaving(.gated(gate)))
        let photoURL = server.url("/photo.jpg")

        // The images article, "Progressive JPEG previews":
        var configuration = ObjectManager.Configuration.images()
        configuration.previewInterval = 0.25  // the default: at most four previews a second
        configuration.policy.timeout = 300  // the test's, not the article's: the gate holds the body
        let manager = ObjectManager(configuration: configuration)
        let user = PhotoPreviewUser(url: photoURL)
        manager.manage(user)

        #expect(await waitUntil { user.images.count == 1 })
        #expect(user.images.first?.preview?.completedScans == 1)
        gate.release()
        // The image comes last (the rest may arrive in several pieces, which may bring previews).
        #expect(await waitUntil { user.images.last?.isPreview == false })
        #expect(user.images.dropLast().allSatisfy { $0.isPreview })
        let image = try ImageDecoder().decodeImage(body)
        #expect(user.images.last == image)
    }
}
