import Foundation
import ManagedCache

/// The decisions of a `ManagedImageView`, as a value: which request is current, what to show,
/// which callbacks to make, what the manager must do. No locks, no threads, no UIKit: the
/// `ImageViewModel` runs it under its lock and carries out the returned `ManagerCommands` after.
///
/// Rules:
/// - A result (image, failure, progress) counts only if it is for the active request, the view is
///   still configured for that request, and the view is waiting for it. Anything else is stale
///   and dropped: a reused view never shows its previous image.
/// - Every new request, `clear()` and delayed load bumps `generation`; callbacks queued for an
///   older generation are dropped before delivery.
/// - The display is derived from the phase (`display(for:)`), and `displayVersion` changes only
///   when what is shown changes.
/// - Transitions: an image that arrives after the shell rendered something for the current load
///   (`noteRendered()`) is shown with `transition`; one that arrives before (a memory hit inside
///   `manage`, a reused view's first image) is set at once. Reduced motion turns it off.
/// - An image the app sets (`prepareStoredImage`) is shown at once; a newer stored image of the
///   same request (another view stored an edit, or the variant of this one was made) replaces it.
/// - A new variant of the image on screen (the view's size changed enough to need another
///   decode, `prepareManage` with another fallback format) keeps that image on screen, with no
///   placeholder, spinner, preview or failure in between, and replaces it with no transition:
///   the picture is the same, only sharper or lighter.
struct ImageViewState {
    /// The load the view is managed for.
    struct ActiveLoad {
        let request: ObjectRequest
        let decoder: ImageDecoder
        let manager: ObjectManager
        /// The name of the format set on the view when it was managed (`nil`: none was set).
        let explicitFormatName: String?
        /// The identifiers of the processors set on the view when it was managed.
        let processorsIdentifier: String
    }

    /// What the model must ask the managers once its lock is released.
    struct ManagerCommands {
        /// Detach the view from this manager.
        var unmanage: ObjectManager?
        /// Manage the view with this manager.
        var manage: ObjectManager?
    }

    /// A callback waiting for delivery, for the generation it was made in.
    struct PendingEvent {
        let generation: UInt64
        let event: ImageViewEvent
    }

    // Configuration: what the next `manage` loads and how the view looks.
    var url: URL?
    var oid: String?
    var format: ImageCacheFormat?
    /// Processors run after the format's; take effect at the next `manage`.
    var processors: [any ImageProcessor] = []
    /// How images that arrive after something else was shown are animated; applies to images
    /// that arrive from now on.
    var transition = ImageTransition.fade
    /// Whether the user asked for reduced motion: no transition then (from now on).
    var reducesMotion = false
    var manager: ObjectManager
    private(set) var placeholder: DecodedImage?
    private(set) var failureImage: DecodedImage?
    /// Whether the view wants progressive previews (read by the manager at `manage`).
    var showsPreviews = true

    // The current load.
    private(set) var active: ActiveLoad?
    private(set) var phase: ImageViewPhase = .idle
    /// The latest progressive preview of the active load, while it is loading.
    private(set) var preview: DecodedImage?
    private(set) var generation: UInt64 = 0
    private(set) var scheduledToken: UInt64?
    private var scheduledWork: ScheduledWork?

    // What is shown, and what is to be said.
    private(set) var display = ImageViewDisplay.empty
    private(set) var displayVersion: UInt64 = 0
    /// Whether the shell rendered a display since the current load began (its placeholder,
    /// spinner, nothing, or the image it replaces): an image arriving now is a visible change.
    private var renderedThisLoad = false
    /// The transition of the image being shown.
    private var arrivalTransition = ImageTransition.none
    /// The load whose image is on screen while the active load makes another variant of it
    /// (`nil` otherwise): the image stays until the new variant arrives, which replaces it at
    /// once; if the new variant fails or is cancelled, the view is back on this load.
    private var replacedLoad: ActiveLoad?
    /// Whether the active load is another variant of the image on screen.
    var replacesVariant: Bool { replacedLoad != nil }
    var outbox: [PendingEvent] = []

    init(manager: ObjectManager) {
        self.manager = manager
    }

    /// The request `url` and `oid` describe; an oid alone names an object the caches may hold
    /// (`ObjectRequest(oid:)`: a stored image), with no URL to load it from.
    var configuredRequest: ObjectRequest? {
        guard let url else { return oid.map { ObjectRequest(oid: $0) } }
        return ObjectRequest(url: url, oid: oid)
    }

    /// The decoder for the view's format (or `fallbackFormat`) and processors.
    func decoder(fallbackFormat: ImageCacheFormat?) -> ImageDecoder {
        ImageDecoder(format: format ?? fallbackFormat, processors: processors)
    }

    private var processorsIdentifier: String { ImageProcessing.identifier(of: processors) }

    // MARK: - Actions

    /// Prepares managing the configured request; `fallbackFormat` is used when no format is set
    /// (the UIKit view's own size). Managing the request already loading or shown changes nothing.
    mutating func prepareManage(fallbackFormat: ImageCacheFormat?) -> ManagerCommands {
        guard let request = configuredRequest else { return detach(to: .idle) }
        let decoder = decoder(fallbackFormat: fallbackFormat)
        if let active, active.request == request, active.decoder.identifier == decoder.identifier,
            active.manager === manager, active.explicitFormatName == format?.name, phase.isLoadingOrShowing
        {
            cancelScheduled()
            return ManagerCommands()
        }
        if let active, case .showing = phase, active.request == request, active.manager === manager,
            active.explicitFormatName == format?.name, active.processorsIdentifier == processorsIdentifier
        {
            // Only the variant changes (the view's size): the image stays until the new one arrives.
            cancelScheduled()
            replacedLoad = replacedLoad ?? active
            self.active = ActiveLoad(
                request: request, decoder: decoder, manager: manager, explicitFormatName: format?.name,
                processorsIdentifier: processorsIdentifier)
            return ManagerCommands(unmanage: nil, manage: manager)  // `manage` detaches the old variant itself.
        }
        var commands = detach(to: .loading(nil))
        if commands.unmanage === manager { commands.unmanage = nil }  // `manage` detaches the old request itself.
        active = ActiveLoad(
            request: request, decoder: decoder, manager: manager, explicitFormatName: format?.name,
            processorsIdentifier: processorsIdentifier)
        commands.manage = manager
        return commands
    }

    /// Shows `image`, which the app gives the view with its `oid` (and `url`, when it has one), at
    /// once, and prepares managing the view for that request so it shares the stored image and
    /// hears of newer ones. The caller stores the image before managing. `announces`:
    /// whether `imageSet` is queued.
    mutating func prepareStoredImage(
        _ image: DecodedImage, oid: String, url: URL?, fallbackFormat: ImageCacheFormat?, announces: Bool = true
    ) -> (commands: ManagerCommands, request: ObjectRequest, decoder: ImageDecoder) {
        self.url = url
        self.oid = oid
        let request = url.map { ObjectRequest(url: $0, oid: oid) } ?? ObjectRequest(oid: oid)
        let decoder = decoder(fallbackFormat: fallbackFormat)
        var commands = detach(to: .showing(image, .stored))
        if commands.unmanage === manager { commands.unmanage = nil }
        active = ActiveLoad(
            request: request, decoder: decoder, manager: manager, explicitFormatName: format?.name,
            processorsIdentifier: processorsIdentifier)
        commands.manage = manager
        if announces { enqueue(.imageSet(image, .stored)) }
        return (commands, request, decoder)
    }

    /// The shell rendered the current display: from now on an image arriving for this load
    /// replaces something on screen, and is shown with the transition.
    mutating func noteRendered() {
        renderedThisLoad = true
    }

    /// Forgets the URL and the load: HJCache's `clear` before cell reuse.
    mutating func clear() -> ManagerCommands {
        url = nil
        oid = nil
        return detach(to: .idle)
    }

    /// Configures `url` for a load that starts when the delay identified by `token` ends.
    mutating func prepareDelayedLoad(url: URL, token: UInt64) -> ManagerCommands {
        self.url = url
        oid = nil
        let commands = detach(to: .scheduled)
        scheduledToken = token
        return commands
    }

    /// Keeps `work` as the timer of the delayed load `token`; returns `false` if that load was
    /// cancelled meanwhile (the caller then cancels `work`).
    mutating func attachScheduledWork(_ work: ScheduledWork, token: UInt64) -> Bool {
        guard scheduledToken == token else { return false }
        scheduledWork = work
        return true
    }

    /// Whether the delayed load `token` may start now; it is consumed either way.
    mutating func takeScheduled(token: UInt64) -> Bool {
        guard scheduledToken == token else { return false }
        scheduledToken = nil
        scheduledWork = nil
        return true
    }

    /// Cancels a pending delayed load, if any.
    mutating func cancelScheduled() {
        scheduledWork?.cancel()
        scheduledWork = nil
        scheduledToken = nil
        if case .scheduled = phase { setPhase(.idle) }
    }

    // MARK: - Configuration

    /// Sets the URL (takes effect at the next `manage`); a different URL cancels a delayed load.
    mutating func setURL(_ newValue: URL?) {
        if newValue != url { cancelScheduled() }
        url = newValue
    }

    /// Sets the oid (takes effect at the next `manage`); a different oid cancels a delayed load.
    mutating func setOID(_ newValue: String?) {
        if newValue != oid { cancelScheduled() }
        oid = newValue
    }

    /// Returns whether what is shown changed.
    mutating func setPlaceholder(_ image: DecodedImage?) -> Bool {
        placeholder = image
        return refreshDisplay()
    }

    /// Returns whether what is shown changed.
    mutating func setFailureImage(_ image: DecodedImage?) -> Bool {
        failureImage = image
        return refreshDisplay()
    }

    // MARK: - Results from the manager

    /// Returns whether the image was taken (and the display changed): the image of the load the
    /// view waits for, a newer stored image of the request it shows, or the variant of an image
    /// the app set (made in the background, it may reach the view as a memory hit).
    mutating func receiveImage(_ image: DecodedImage, origin: DataOrigin, for request: ObjectRequest) -> Bool {
        guard isCurrent(request) else { return false }
        switch phase {
        case .loading:
            break
        case .showing(let shown, _) where replacesVariant:
            guard shown != image else {
                replacedLoad = nil  // the variant on screen is the one asked for again
                return false
            }
        case .showing(let shown, let shownOrigin) where (origin == .stored || shownOrigin == .stored) && shown != image:
            break
        default:
            return false
        }
        // Shown with the transition only if the shell has shown something else for this load; a
        // new variant of the image on screen is the same picture: set at once.
        let transition = renderedThisLoad && !replacesVariant ? transition.respectingReducedMotion(reducesMotion) : .none
        replacedLoad = nil
        setPhase(.showing(image, origin), transition: transition)
        enqueue(.imageSet(image, origin))
        return true
    }

    /// Returns whether the failure or cancellation was taken. A new variant that fails keeps the
    /// image on screen (it is still the right picture) and reports nothing; managing the view
    /// again tries the variant again.
    mutating func receiveFailure(_ error: ManagedCacheError, for request: ObjectRequest) -> Bool {
        if let replacedLoad, isCurrent(request) {
            active = replacedLoad  // what is on screen; managing for the new size again retries
            self.replacedLoad = nil
            return false
        }
        guard isCurrent(request), phase.isLoading else { return false }
        if case .cancelled(let reason) = error {
            setPhase(.cancelled(reason))
            enqueue(.cancelled(reason))
        } else {
            setPhase(.failed(error))
            enqueue(.failed(error))
        }
        return true
    }

    /// Returns whether the progress was taken.
    mutating func receiveProgress(_ progress: LoadProgress, for request: ObjectRequest) -> Bool {
        guard isCurrent(request), phase.isLoading else { return false }
        setPhase(.loading(progress))
        enqueue(.progress(progress))
        return true
    }

    /// Returns whether the preview was taken (the display changed): only while the view shows
    /// previews and the active load is loading, so a preview never follows the image, a failure
    /// or a cancellation.
    mutating func receivePreview(_ image: DecodedImage, for request: ObjectRequest) -> Bool {
        guard showsPreviews, isCurrent(request), phase.isLoading else { return false }
        preview = image
        return refreshDisplay()
    }

    /// Removes and returns the next callback of the current generation, dropping stale ones.
    mutating func nextEvent() -> ImageViewEvent? {
        while !outbox.isEmpty {
            let pending = outbox.removeFirst()
            if pending.generation == generation { return pending.event }
        }
        return nil
    }

    // MARK: - Display

    /// What a view in `phase` shows: while loading, the latest `preview` (if any) replaces the
    /// placeholder; a shown image arrives with `transition`.
    static func display(
        for phase: ImageViewPhase, placeholder: DecodedImage?, failureImage: DecodedImage?, preview: DecodedImage? = nil,
        transition: ImageTransition = .none
    ) -> ImageViewDisplay {
        let resting: DisplayedContent = placeholder.map { .placeholder($0) } ?? .empty
        switch phase {
        case .idle, .scheduled, .cancelled:
            return ImageViewDisplay(content: resting)
        case .loading(let progress):
            let content = preview.map { DisplayedContent.preview($0) } ?? resting
            return ImageViewDisplay(content: content, isActivityIndicatorVisible: true, progress: progress)
        case .showing(let image, _):
            return ImageViewDisplay(content: .image(image), transition: transition)
        case .failed:
            return ImageViewDisplay(content: .failure(failureImage))
        }
    }

    // MARK: - Private

    /// Whether a result for `request` is for what the view is configured to show now.
    private func isCurrent(_ request: ObjectRequest) -> Bool {
        guard let active else { return false }
        return active.request == request && configuredRequest == request && active.explicitFormatName == format?.name
            && active.processorsIdentifier == processorsIdentifier
    }

    /// Drops the active load (returning the manager to detach from) and moves to `phase`.
    private mutating func detach(to phase: ImageViewPhase) -> ManagerCommands {
        cancelScheduled()
        let commands = ManagerCommands(unmanage: active?.manager, manage: nil)
        active = nil
        preview = nil
        replacedLoad = nil
        generation &+= 1
        renderedThisLoad = false
        setPhase(phase)
        return commands
    }

    /// Moves to `newPhase`; an image phase is shown with `transition`, every other with none.
    private mutating func setPhase(_ newPhase: ImageViewPhase, transition: ImageTransition = .none) {
        phase = newPhase
        arrivalTransition = transition
        if !newPhase.isLoading { preview = nil }  // the image replaces it; a failure removes it
        refreshDisplay()
    }

    @discardableResult
    private mutating func refreshDisplay() -> Bool {
        let newDisplay = Self.display(
            for: phase, placeholder: placeholder, failureImage: failureImage, preview: preview, transition: arrivalTransition)
        guard newDisplay != display else { return false }
        display = newDisplay
        displayVersion &+= 1
        return true
    }

    private mutating func enqueue(_ event: ImageViewEvent) {
        outbox.append(PendingEvent(generation: generation, event: event))
    }
}
