import Foundation
import ManagedCache

/// The platform-neutral model behind the SwiftUI view ``ManagedImage``: a main-actor user of the
/// manager that turns a URL, the view's laid-out size and its visibility into a
/// ``ManagedImagePhase``.
///
/// Every decision is here (and tested on Linux); the SwiftUI view only reports its size and
/// appearance and draws the phase:
/// - It loads only while the view is visible and laid out (``appear()``, ``layoutChanged(width:height:scale:)``),
///   at the laid-out pixel size unless a `format` is given (``LayoutSizing``: never upscaled, a
///   new variant only when the size changes enough).
/// - A memory hit arrives before ``appear()`` or ``load(url:oid:priority:)`` returns: no
///   placeholder flash.
/// - A new variant of the same image keeps the old one on screen until it arrives.
/// - ``disappear()`` detaches from the manager and keeps the image it has; the load itself follows
///   the manager's policy (by default it finishes into the cache for the next appearance; with
///   `finishLoadingWithoutUsers = false` a load nobody else wants is cancelled).
/// - It shares the one decoded image with every other user of the key, like any user.
/// - An image that arrives after the call that loaded it returned (a download, a file-cache read,
///   a decode) asks for ``transition`` (``phaseTransition``); a memory hit, and every other
///   change, for none, so rows scrolled into view never fade in what was already in memory.
///
/// ```swift
/// let model = ManagedImageModel()
/// model.onChange = { [weak model] in print(model?.phase.image?.pixelSize as Any) }
/// model.load(url: avatarURL)
/// model.layoutChanged(width: 64, height: 64, scale: 3)
/// model.appear()
/// ```
@MainActor
public final class ManagedImageModel: MainActorObjectUser {
    /// What to show now. `onChange` is called after every change.
    public private(set) var phase: ManagedImagePhase = .empty {
        didSet {
            guard phase != oldValue else { return }
            phaseChangeCount &+= 1
            onChange?()
        }
    }
    /// How an image that arrives after the view has shown something else for it appears
    /// (default ``/ManagedCacheUIKit/ImageTransition/fade``, a 0.25 s cross-fade; `.none` sets it at once).
    public var transition = ImageTransition.fade
    /// How the last change of ``phase`` should be animated: ``transition`` for an image that
    /// arrived after `load`, `appear` or a layout change returned; `.none` for a memory hit (it
    /// arrives inside that call) and for every other phase.
    public private(set) var phaseTransition = ImageTransition.none
    /// How many times ``phase`` has changed: the value a view animates on (`animation(_:value:)`).
    public private(set) var phaseChangeCount = 0
    /// Called on the main actor after `phase` changed (an `ObservableObject` wrapper sends its
    /// `objectWillChange` here).
    public var onChange: (@MainActor () -> Void)?
    /// The manager that loads and shares the images (default: `ObjectManager.defaultImageManager`).
    public let manager: ObjectManager
    /// How the image fills the view, for the format made from the layout (default `.aspectFill`).
    public var scaleMode: ImageScaleMode
    /// A fixed format, instead of one made from the laid-out size (default `nil`).
    public var format: ImageCacheFormat?
    /// The sizing decision (default `LayoutSizing()`).
    public var sizing = LayoutSizing()

    /// The request the manager answers now; `nil` while nothing is loading or shown.
    public private(set) var objectRequest: ObjectRequest?
    /// The decoder (and so the variant) of that request.
    public private(set) var objectDecoder = ImageDecoder()

    private var source: ObjectRequest?
    private var layoutPixelSize: PixelSize?
    private var requestedPixelSize: PixelSize?
    private var isVisible = false
    /// Inside `manager.manage(self)`: an image delivered now is a memory hit.
    private var isManaging = false

    /// Creates a model loading through `manager`, filling its view as `scaleMode` says.
    ///
    /// - Parameters:
    ///   - manager: Default `ObjectManager.defaultImageManager`.
    ///   - scaleMode: Default `.aspectFill`.
    ///   - format: A fixed format instead of the laid-out size (default `nil`).
    public init(
        manager: ObjectManager = .defaultImageManager, scaleMode: ImageScaleMode = .aspectFill,
        format: ImageCacheFormat? = nil
    ) {
        self.manager = manager
        self.scaleMode = scaleMode
        self.format = format
    }

    // MARK: - What the view reports

    /// Sets what the view shows; it loads once the view is visible and laid out. The same source
    /// again changes nothing.
    ///
    /// - Parameters:
    ///   - url: The image's URL; `nil` clears.
    ///   - oid: The key to use instead of the URL. Default `nil`.
    ///   - priority: The load's priority. Default ``/ManagedCache/LoadPriority/normal``.
    public func load(url: URL?, oid: String? = nil, priority: LoadPriority = .normal) {
        let request = url.map { ObjectRequest(url: $0, oid: oid, priority: priority) }
        guard request != source else { return }
        let sameImage = request?.dataKey == source?.dataKey
        source = request
        if !sameImage { show(.empty) }
        start()
    }

    /// Reports the view's layout; a size that changes enough loads another variant.
    ///
    /// - Parameters:
    ///   - width: The view's width in points.
    ///   - height: The view's height in points.
    ///   - scale: Pixels per point (the screen's scale).
    public func layoutChanged(width: Double, height: Double, scale: Double) {
        guard let size = sizing.pixelSize(width: width, height: height, scale: scale) else { return }
        layoutPixelSize = size
        guard format == nil, sizing.needsNewVariant(current: requestedPixelSize, new: size) else { return }
        start()
    }

    /// The view is on screen: loads what it shows.
    public func appear() {
        isVisible = true
        start()
    }

    /// The view left the screen: detaches from the manager, keeps the image it has, and loads
    /// again when it appears.
    public func disappear() {
        isVisible = false
        stop()
        if case .loading = phase { show(.empty) }
    }

    // MARK: - Loading

    private func start() {
        guard isVisible, let source else {
            stop()
            return
        }
        let chosen: ImageCacheFormat
        if let format {
            chosen = format
        } else if let layoutPixelSize {
            chosen = sizing.format(for: layoutPixelSize, scaleMode: scaleMode)
        } else {
            return  // not laid out yet: decoding at full size would waste memory
        }
        requestedPixelSize = format == nil ? layoutPixelSize : nil
        objectDecoder = ImageDecoder(format: chosen)
        objectRequest = source
        // A new variant of the image on screen keeps it there until the new one arrives.
        if phase.image == nil { show(.loading(nil)) }
        isManaging = true
        manager.manage(self)
        isManaging = false
    }

    /// Shows `newPhase`, animated as `transition` says.
    private func show(_ newPhase: ManagedImagePhase, transition: ImageTransition = .none) {
        phaseTransition = transition
        phase = newPhase
    }

    private func stop() {
        guard objectRequest != nil else { return }
        manager.unmanage(self)
        objectRequest = nil
        requestedPixelSize = nil
    }

    // MARK: - MainActorObjectUser

    /// The manager's answer: the shared image.
    ///
    /// - Parameters:
    ///   - object: The decoded image.
    ///   - origin: Where it came from.
    ///   - request: The request it answers; an answer to an older request is ignored.
    public func managedObjectReady(_ object: DecodedImage, origin: DataOrigin, request: ObjectRequest) {
        guard request == objectRequest else { return }
        show(.success(object, origin), transition: isManaging ? .none : transition)
    }

    /// The manager's answer: a failure, or a cancellation (shown as `.empty`, tried again on the
    /// next appearance).
    ///
    /// - Parameters:
    ///   - error: Why.
    ///   - request: The request it answers; an answer to an older request is ignored.
    public func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        guard request == objectRequest else { return }
        objectRequest = nil
        requestedPixelSize = nil
        if case .cancelled = error {
            if phase.image == nil { show(.empty) }
        } else {
            show(.failure(error))
        }
    }

    /// Bytes arrived.
    ///
    /// - Parameters:
    ///   - progress: The bytes received so far.
    ///   - request: The request they belong to.
    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        guard request == objectRequest, case .loading = phase else { return }
        show(.loading(progress))
    }
}
