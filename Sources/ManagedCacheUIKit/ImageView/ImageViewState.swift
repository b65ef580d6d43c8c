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
struct ImageViewState {
    /// The load the view is managed for.
    struct ActiveLoad {
        let request: ObjectRequest
        let decoder: ImageDecoder
        let manager: ObjectManager
        /// The name of the format set on the view when it was managed (`nil`: none was set).
        let explicitFormatName: String?
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
    var manager: ObjectManager
    private(set) var placeholder: DecodedImage?
    private(set) var failureImage: DecodedImage?

    // The current load.
    private(set) var active: ActiveLoad?
    private(set) var phase: ImageViewPhase = .idle
    private(set) var generation: UInt64 = 0
    private(set) var scheduledToken: UInt64?
    private var scheduledWork: ScheduledWork?

    // What is shown, and what is to be said.
    private(set) var display = ImageViewDisplay.empty
    private(set) var displayVersion: UInt64 = 0
    var outbox: [PendingEvent] = []

    init(manager: ObjectManager) {
        self.manager = manager
    }

    /// The request `url` and `oid` describe.
    var configuredRequest: ObjectRequest? {
        guard let url else { return nil }
        return ObjectRequest(url: url, oid: oid)
    }

    // MARK: - Actions

    /// Prepares managing the configured request; `fallbackFormat` is used when no format is set
    /// (the UIKit view's own size). Managing the request already loading or shown changes nothing.
    mutating func prepareManage(fallbackFormat: ImageCacheFormat?) -> ManagerCommands {
        guard let request = configuredRequest else { return detach(to: .idle) }
        let decoder = ImageDecoder(format: format ?? fallbackFormat)
        if let active, active.request == request, active.decoder.identifier == decoder.identifier,
           active.manager === manager, active.explicitFormatName == format?.name, phase.isLoadingOrShowing {
            cancelScheduled()
            return ManagerCommands()
        }
        var commands = detach(to: .loading(nil))
        if commands.unmanage === manager { commands.unmanage = nil }  // `manage` detaches the old request itself.
        active = ActiveLoad(request: request, decoder: decoder, manager: manager, explicitFormatName: format?.name)
        commands.manage = manager
        return commands
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

    /// Returns whether the image was taken (and the display changed).
    mutating func receiveImage(_ image: DecodedImage, origin: DataOrigin, for request: ObjectRequest) -> Bool {
        guard isCurrent(request), phase.isLoading else { return false }
        setPhase(.showing(image, origin))
        enqueue(.imageSet(image, origin))
        return true
    }

    /// Returns whether the failure or cancellation was taken.
    mutating func receiveFailure(_ error: ManagedCacheError, for request: ObjectRequest) -> Bool {
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

    /// Removes and returns the next callback of the current generation, dropping stale ones.
    mutating func nextEvent() -> ImageViewEvent? {
        while !outbox.isEmpty {
            let pending = outbox.removeFirst()
            if pending.generation == generation { return pending.event }
        }
        return nil
    }

    // MARK: - Display

    /// What a view in `phase` shows.
    static func display(for phase: ImageViewPhase, placeholder: DecodedImage?, failureImage: DecodedImage?) -> ImageViewDisplay {
        let resting: DisplayedContent = placeholder.map { .placeholder($0) } ?? .empty
        switch phase {
        case .idle, .scheduled, .cancelled:
            return ImageViewDisplay(content: resting)
        case .loading(let progress):
            return ImageViewDisplay(content: resting, isActivityIndicatorVisible: true, progress: progress)
        case .showing(let image, _):
            return ImageViewDisplay(content: .image(image))
        case .failed:
            return ImageViewDisplay(content: .failure(failureImage))
        }
    }

    // MARK: - Private

    /// Whether a result for `request` is for what the view is configured to show now.
    private func isCurrent(_ request: ObjectRequest) -> Bool {
        guard let active else { return false }
        return active.request == request && configuredRequest == request && active.explicitFormatName == format?.name
    }

    /// Drops the active load (returning the manager to detach from) and moves to `phase`.
    private mutating func detach(to phase: ImageViewPhase) -> ManagerCommands {
        cancelScheduled()
        let commands = ManagerCommands(unmanage: active?.manager, manage: nil)
        active = nil
        generation &+= 1
        setPhase(phase)
        return commands
    }

    private mutating func setPhase(_ newPhase: ImageViewPhase) {
        phase = newPhase
        refreshDisplay()
    }

    @discardableResult
    private mutating func refreshDisplay() -> Bool {
        let newDisplay = Self.display(for: phase, placeholder: placeholder, failureImage: failureImage)
        guard newDisplay != display else { return false }
        display = newDisplay
        displayVersion &+= 1
        return true
    }

    private mutating func enqueue(_ event: ImageViewEvent) {
        outbox.append(PendingEvent(generation: generation, event: event))
    }
}
