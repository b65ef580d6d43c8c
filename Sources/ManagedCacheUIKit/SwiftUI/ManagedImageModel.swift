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
/// - A new variant of the same image (a new size, `format` or `scaleMode`), another priority or
///   another manager keeps the image on screen until the new answer replaces it, at once; another
///   image (`url` or `oid`) clears it first.
/// - ``disappear()`` detaches from the manager and keeps the image it has; the load itself follows
///   the manager's policy (by default it finishes into the cache for the next appearance; with
///   `finishLoadingWithoutUsers = false` a load nobody else wants is cancelled).
/// - It shares the one decoded image with every other user of the key, like any user.
/// - An image that arrives after the call that loaded it returned (a download, a file-cache read,
///   a decode) asks for ``transition`` (``phaseTransition``); a memory hit, an image that replaces
///   one of the same key (a new variant), and every other change, for none, so rows scrolled into
///   view never fade in what was already in memory.
///
/// ```swift
/// // Assumes `avatarURL` (a URL).
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
    /// A ``ManagedImage`` given another manager moves its model to it.
    public private(set) var manager: ObjectManager
    /// How the image fills the view, for the format made from the layout (default `.aspectFill`).
    /// A change loads the new variant (the image on screen stays until it arrives).
    public var scaleMode: ImageScaleMode {
        didSet { if scaleMode != oldValue, format == nil, !isApplying { reload(keepingImage: true) } }
    }
    /// A fixed format, instead of one made from the laid-out size (default `nil`). A change loads
    /// the new variant (the image on screen stays until it arrives).
    public var format: ImageCacheFormat? {
        didSet { if format?.variantIdentifier != oldValue?.variantIdentifier, !isApplying { reload(keepingImage: true) } }
    }
    /// The sizing decision (default `LayoutSizing()`).
    public var sizing = LayoutSizing()

    /// The request the manager answers now; `nil` while nothing is loading or shown.
    public private(set) var objectRequest: ObjectRequest?
    /// The decoder (and so the variant) of that request.
    public private(set) var objectDecoder = ImageDecoder()

    private var source: ObjectRequest?
    private var layoutPixelSize: PixelSize?
    /// How the image fills `layoutPixelSize` when the view's placement decided it (a box with a
    /// side the proposal left open is fitted); `nil` for ``scaleMode``.
    private var layoutScaleMode: ImageScaleMode?
    private var requestedPixelSize: PixelSize?
    private var requestedScaleMode: ImageScaleMode?
    private var isVisible = false
    /// Inside `manager.manage(self)`: an image delivered now is a memory hit.
    private var isManaging = false
    /// The image on screen stays while the current request loads another answer for its key (a
    /// new variant, priority or manager): that answer replaces it at once, and a failure keeps it.
    private(set) var replacesShownImage = false
    /// Inside `apply(_:)`: the property observers leave the reload to it.
    private var isApplying = false
    /// What the ``ManagedImage`` last gave (`nil` for a model used on its own).
    private var inputs: ManagedImageInputs?

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

    /// A model for a ``ManagedImage`` given `inputs`; made once per view identity.
    convenience init(inputs: ManagedImageInputs) {
        self.init(manager: inputs.manager, scaleMode: inputs.scaleMode, format: inputs.format)
        transition = inputs.transition
    }

    /// Takes the inputs of the latest render of a ``ManagedImage``: whatever changed takes effect,
    /// as ``ManagedImageInputs/change(to:)`` decides (another image clears and loads; another
    /// variant, priority or manager keeps the image on screen until the new answer; a transition
    /// applies to the next image). The same inputs again change nothing.
    ///
    /// - Parameter new: The inputs of the latest render.
    func apply(_ new: ManagedImageInputs) {
        let previous =
            inputs
            ?? ManagedImageInputs(
                url: source?.url, oid: source?.oid, priority: source?.priority ?? .normal, format: format, scaleMode: scaleMode,
                transition: transition, manager: manager)
        inputs = new
        transition = new.transition
        let change = previous.change(to: new)
        guard change > .transition else { return }
        if manager !== new.manager {
            stop()  // leaves the old manager
            manager = new.manager
        }
        isApplying = true
        format = new.format
        scaleMode = new.scaleMode
        isApplying = false
        source = new.request
        reload(keepingImage: change != .image)
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
        reload(keepingImage: sameImage)
    }

    /// Reports the view's layout; a size that changes enough loads another variant.
    ///
    /// - Parameters:
    ///   - width: The view's width in points.
    ///   - height: The view's height in points.
    ///   - scale: Pixels per point (the screen's scale).
    public func layoutChanged(width: Double, height: Double, scale: Double) {
        guard let size = sizing.pixelSize(width: width, height: height, scale: scale) else { return }
        layoutChanged(pixelBox: size, scaleMode: nil)
    }

    /// Reports where a ``ManagedImage`` was placed: the variant ``ManagedImageSizing`` chose for
    /// it. Another box loads another variant when it changes enough (`LayoutSizing`), another
    /// scale mode at once.
    ///
    /// - Parameter variant: The box in pixels and how the image fills it.
    func placed(_ variant: ManagedImageSizing.Variant) {
        layoutChanged(pixelBox: variant.pixelBox, scaleMode: variant.scaleMode)
    }

    private func layoutChanged(pixelBox: PixelSize, scaleMode: ImageScaleMode?) {
        layoutPixelSize = pixelBox
        layoutScaleMode = scaleMode
        guard format == nil else { return }
        let modeChanged = requestedPixelSize != nil && requestedScaleMode != (scaleMode ?? self.scaleMode)
        guard modeChanged || sizing.needsNewVariant(current: requestedPixelSize, new: pixelBox) else { return }
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

    /// Loads again for the current source, size and format: an image of the same key stays on
    /// screen until the answer replaces it; another image goes at once.
    private func reload(keepingImage: Bool) {
        if !keepingImage { show(.empty) }
        requestedPixelSize = nil
        start()
    }

    private func start() {
        guard isVisible, let source else {
            stop()
            return
        }
        let chosen: ImageCacheFormat
        if let format {
            chosen = format
        } else if let layoutPixelSize {
            chosen = sizing.format(for: layoutPixelSize, scaleMode: layoutScaleMode ?? scaleMode)
        } else {
            return  // not laid out yet: decoding at full size would waste memory
        }
        requestedPixelSize = format == nil ? layoutPixelSize : nil
        requestedScaleMode = format == nil ? chosen.scaleMode : nil
        objectDecoder = ImageDecoder(format: chosen)
        objectRequest = source
        // A new variant of the image on screen keeps it there until the new one replaces it.
        replacesShownImage = phase.image != nil
        if !replacesShownImage { show(.loading(nil)) }
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
        let replaces = replacesShownImage
        replacesShownImage = false
        show(.success(object, origin), transition: isManaging || replaces ? .none : transition)
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
        let replaces = replacesShownImage
        replacesShownImage = false
        if replaces, phase.image != nil {
            return  // the image on screen is still the right picture; the next appearance tries again
        }
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
