import Foundation
import ManagedCache

// What every `ManagedImageView` (the UIKit view and the headless one; one of them exists on each
// platform) forwards to its platform-independent core, `ImageViewModel`: what to load, how it
// looks, what is displayed, and the manager's callbacks. Written once here; each shell adds what
// differs (layout and rendering in UIKit, the display hook and thread-safe closures headless).
//
// The members are `nonisolated`: the UIKit view is main-actor isolated, but its core is
// thread-safe and the manager calls a user from any thread. On the headless view, which is not
// isolated, the word changes nothing.
extension ManagedImageView {
    /// The view decodes with `ImageDecoder`.
    public typealias Decoder = ImageDecoder

    // MARK: - What to load

    /// The image's URL. Setting it loads nothing until `manage()` (HJCache's `url` then
    /// `manage:`), but results for the previous URL are ignored from then on.
    nonisolated public var url: URL? {
        get { model.url }
        set { model.url = newValue }
    }

    /// The object id that keys the image instead of the URL (HJCache's `oid`): URLs that differ
    /// (load-balanced hosts, signed queries) but share an oid share one download and image.
    /// Takes effect at the next `manage()`.
    nonisolated public var oid: String? {
        get { model.oid }
        set { model.oid = newValue }
    }

    /// The format images are fitted and transformed to. Default `nil`: the UIKit view fits them to
    /// its own laid-out size and `contentMode`; the headless view, which has no size, keeps them as
    /// decoded. Takes effect at the next `manage()`.
    nonisolated public var format: ImageCacheFormat? {
        get { model.format }
        set { model.format = newValue }
    }

    /// The manager that loads and caches the image. Takes effect at the next `manage()`.
    nonisolated public var manager: ObjectManager {
        get { model.manager }
        set { model.manager = newValue }
    }

    /// Processors run on the image after the format's (or the view-size fitting), in order: part
    /// of the variant's key, run once per key and variant, off the main thread. Default none.
    /// Takes effect at the next `manage()`.
    nonisolated public var processors: [any ImageProcessor] {
        get { model.processors }
        set { model.processors = newValue }
    }

    /// How an image that arrives after the view showed something else for its load is shown, as
    /// `ImageViewDisplay.transition`: default `.fade` (a 0.25 s cross-dissolve), `.none` to set
    /// images at once. A memory hit, and a new variant of the image on screen (after a size
    /// change), are always set at once; reduced motion (the system's Reduce Motion on UIKit,
    /// `reducesMotion` headless) turns the animation off. Applies to images that arrive from now on.
    nonisolated public var transition: ImageTransition {
        get { model.transition }
        set { model.transition = newValue }
    }

    /// Shown while there is no image (loading, cleared, cancelled). Default `nil`: nothing.
    nonisolated public var placeholder: DecodedImage? {
        get { model.placeholder }
        set { model.placeholder = newValue }
    }

    /// Shown when the URL fails to load. Default `nil`: nothing (`.failure(nil)`).
    nonisolated public var failureImage: DecodedImage? {
        get { model.failureImage }
        set { model.failureImage = newValue }
    }

    /// Whether a progressive JPEG shows previews while it downloads (`.preview` content, decoded
    /// by ImageIO on Apple platforms from the complete scans so far, each time a new scan is
    /// complete, at most every `ObjectManager.Configuration.previewInterval`) until the image
    /// replaces them. Default `true`. Takes effect at the next `manage()`.
    nonisolated public var showsPreviews: Bool {
        get { model.showsPreviews }
        set { model.showsPreviews = newValue }
    }

    /// Sets ``url`` and ``oid`` and loads them: the usual call in a cell's configuration.
    ///
    /// - Parameters:
    ///   - url: The image's URL; `nil` clears the view.
    ///   - oid: The key to use instead of the URL. Default `nil`.
    public func load(url: URL?, oid: String? = nil) {
        model.url = url
        model.oid = oid
        manage()
    }

    // MARK: - What is displayed

    /// What the view shows now (what it last rendered, or passed to `displayHook`).
    nonisolated public var displayed: DisplayedContent { model.rendered.content }

    /// Everything the view shows now: the picture, the activity indicator, the progress.
    nonisolated public var display: ImageViewDisplay { model.rendered }

    /// How much of the current download has arrived, while loading.
    nonisolated public var progress: LoadProgress? { model.rendered.progress }

    // MARK: - ManagedObjectUser (called by the manager, on any thread)

    /// The request being loaded or shown; read by the manager.
    nonisolated public var objectRequest: ObjectRequest? { model.objectRequest }

    /// The decoder for the current format; read by the manager.
    nonisolated public var objectDecoder: ImageDecoder { model.objectDecoder }

    /// `showsPreviews`; read by the manager.
    nonisolated public var wantsPreviews: Bool { model.showsPreviews }

    /// Called by the manager; results for anything but the current request are ignored.
    ///
    /// - Parameters:
    ///   - object: The decoded image.
    ///   - origin: Where it came from.
    ///   - request: The request it answers.
    nonisolated public func managedObjectReady(_ object: DecodedImage, origin: DataOrigin, request: ObjectRequest) {
        model.receiveImage(object, origin: origin, request: request)
    }

    /// Called by the manager; results for anything but the current request are ignored.
    ///
    /// - Parameters:
    ///   - error: Why the request failed or was cancelled.
    ///   - request: The request it answers.
    nonisolated public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        model.receiveFailure(error, request: request)
    }

    /// Called by the manager; progress of anything but the current request is ignored.
    ///
    /// - Parameters:
    ///   - progress: The bytes received so far.
    ///   - request: The request they belong to.
    nonisolated public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        model.receiveProgress(progress, request: request)
    }

    /// Called by the manager; shown while the current request is still loading, else ignored.
    ///
    /// - Parameters:
    ///   - preview: A preview of the image, from the bytes that have arrived.
    ///   - request: The request it belongs to.
    nonisolated public func managedObjectPreview(_ preview: DecodedImage, request: ObjectRequest) {
        model.receivePreview(preview, request: request)
    }
}
