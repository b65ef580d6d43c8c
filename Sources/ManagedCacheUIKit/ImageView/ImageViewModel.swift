import Foundation
import ManagedCache
import ManagedCacheLocking

/// The platform-independent core of `ManagedImageView`: runs `ImageViewState` under a lock, talks
/// to the manager, and hands display changes and callbacks to the view's shell one at a time.
///
/// Delivery ("draining"): every change is recorded under the lock; then one thread at a time
/// drains — it renders the **latest** display (never an intermediate or stale one) and then the
/// queued callbacks of the current generation, calling the shell outside the lock. A change made
/// while another thread drains (or by the shell itself, from inside a callback) is picked up by
/// that drain. So the shell is never called concurrently or re-entrantly, never out of order, and
/// never with an image that is no longer current.
///
/// Nothing here holds the lock while calling the manager, which may call back synchronously
/// (a memory hit is delivered inside `manage`).
final class ImageViewModel: Sendable {
    private struct Core {
        var state: ImageViewState
        weak var host: (any ManagedObjectUser)?
        var sink: (@Sendable (ImageViewEvent) -> Void)?
        var isDraining = false
        var renderedVersion: UInt64 = 0
        var rendered = ImageViewDisplay.empty
        var nextToken: UInt64 = 0
    }

    private let core: Lock<Core>
    /// Whether the shell must only be called on the main thread (UIKit); drains started
    /// elsewhere then move to the main queue.
    private let drainsOnMainThread: Bool
    /// Where delayed loads start.
    private let scheduleQueue: DispatchQueue

    init(manager: ObjectManager, drainsOnMainThread: Bool, scheduleQueue: DispatchQueue) {
        core = Lock(Core(state: ImageViewState(manager: manager)))
        self.drainsOnMainThread = drainsOnMainThread
        self.scheduleQueue = scheduleQueue
    }

    /// Connects the view: `host` is what the manager manages (held weakly), `sink` receives the events.
    func bind(host: some ManagedObjectUser, sink: @escaping @Sendable (ImageViewEvent) -> Void) {
        core.withLock { core in
            core.host = host
            core.sink = sink
        }
    }

    // MARK: - Configuration

    var url: URL? {
        get { core.withLock { $0.state.url } }
        set { core.withLock { $0.state.setURL(newValue) } }
    }

    var oid: String? {
        get { core.withLock { $0.state.oid } }
        set { core.withLock { $0.state.setOID(newValue) } }
    }

    var format: ImageCacheFormat? {
        get { core.withLock { $0.state.format } }
        set { core.withLock { $0.state.format = newValue } }
    }

    var manager: ObjectManager {
        get { core.withLock { $0.state.manager } }
        set { core.withLock { $0.state.manager = newValue } }
    }

    var processors: [any ImageProcessor] {
        get { core.withLock { $0.state.processors } }
        set { core.withLock { $0.state.processors = newValue } }
    }

    var transition: ImageTransition {
        get { core.withLock { $0.state.transition } }
        set { core.withLock { $0.state.transition = newValue } }
    }

    var reducesMotion: Bool {
        get { core.withLock { $0.state.reducesMotion } }
        set { core.withLock { $0.state.reducesMotion = newValue } }
    }

    var placeholder: DecodedImage? {
        get { core.withLock { $0.state.placeholder } }
        set { if core.withLock({ $0.state.setPlaceholder(newValue) }) { drain() } }
    }

    var failureImage: DecodedImage? {
        get { core.withLock { $0.state.failureImage } }
        set { if core.withLock({ $0.state.setFailureImage(newValue) }) { drain() } }
    }

    var showsPreviews: Bool {
        get { core.withLock { $0.state.showsPreviews } }
        set { core.withLock { $0.state.showsPreviews = newValue } }
    }

    /// What the shell was last asked to show.
    var rendered: ImageViewDisplay { core.withLock { $0.rendered } }

    /// Whether the current load is another variant of the image on screen (which stays meanwhile).
    var replacesVariant: Bool { core.withLock { $0.state.replacesVariant } }

    // MARK: - For the manager

    var objectRequest: ObjectRequest? { core.withLock { $0.state.active?.request } }

    var objectDecoder: ImageDecoder { core.withLock { $0.state.active?.decoder } ?? ImageDecoder() }

    func receiveImage(_ image: DecodedImage, origin: DataOrigin, request: ObjectRequest) {
        if core.withLock({ $0.state.receiveImage(image, origin: origin, for: request) }) { drain() }
    }

    func receiveFailure(_ error: ManagedCacheError, request: ObjectRequest) {
        if core.withLock({ $0.state.receiveFailure(error, for: request) }) { drain() }
    }

    func receivePreview(_ preview: DecodedImage, request: ObjectRequest) {
        if core.withLock({ $0.state.receivePreview(preview, for: request) }) { drain() }
    }

    func receiveProgress(_ progress: LoadProgress, request: ObjectRequest) {
        if core.withLock({ $0.state.receiveProgress(progress, for: request) }) { drain() }
    }

    // MARK: - Actions

    /// Loads the configured URL (a memory hit is shown before this returns, with no placeholder first).
    func manage(fallbackFormat: ImageCacheFormat?) {
        let (commands, host) = core.withLock { core in
            (core.state.prepareManage(fallbackFormat: fallbackFormat), core.host)
        }
        run(commands, host: host)
        drain()
    }

    /// Shows `image` at once, stores it under `oid` (and `url`) for the view's variant, in memory
    /// and (with `toFileCache`) on disk, and manages the view for it, so a later load of the oid is
    /// a memory hit. The variant of a format or processors is made in the background
    /// and replaces the image when it is ready. `announces`: whether `onImageSet` is told (not when
    /// the same image is only stored again for another variant).
    func setImage(
        _ image: DecodedImage, oid: String, url: URL?, toFileCache: Bool, fallbackFormat: ImageCacheFormat?, announces: Bool = true
    ) {
        let (prepared, manager, host) = core.withLock { core in
            (
                core.state.prepareStoredImage(image, oid: oid, url: url, fallbackFormat: fallbackFormat, announces: announces),
                core.state.manager, core.host
            )
        }
        // Stored first: managing the view then finds it (a memory hit, or the variant being made).
        manager.storeImage(image, for: prepared.request, decoder: prepared.decoder, toFileCache: toFileCache, completion: nil)
        run(prepared.commands, host: host)
        drain()
    }

    /// Detaches from the manager and shows the placeholder (or nothing).
    func clear() {
        let (commands, host) = core.withLock { core in (core.state.clear(), core.host) }
        run(commands, host: host)
        drain()
    }

    /// Loads `url` after `delay` seconds unless the view is cleared, managed or given another URL
    /// first. An image already in memory is shown at once.
    func load(_ url: URL, afterDelay delay: Double, fallbackFormat: ImageCacheFormat?) {
        let (manager, decoder) = core.withLock { ($0.state.manager, $0.state.decoder(fallbackFormat: fallbackFormat)) }
        if manager.cachedObject(for: ObjectRequest(url: url), decoder: decoder) != nil {
            core.withLock { core in
                core.state.setURL(url)
                core.state.setOID(nil)
            }
            manage(fallbackFormat: fallbackFormat)
            return
        }
        let (commands, host, token) = core.withLock { core in
            core.nextToken &+= 1
            let token = core.nextToken
            return (core.state.prepareDelayedLoad(url: url, token: token), core.host, token)
        }
        run(commands, host: host)
        let work = ScheduledWork(after: delay, on: scheduleQueue) { [weak self] in
            self?.startDelayedLoad(token: token, fallbackFormat: fallbackFormat)
        }
        if !core.withLock({ $0.state.attachScheduledWork(work, token: token) }) { work.cancel() }
        drain()
    }

    private func startDelayedLoad(token: UInt64, fallbackFormat: ImageCacheFormat?) {
        guard core.withLock({ $0.state.takeScheduled(token: token) }) else { return }
        manage(fallbackFormat: fallbackFormat)
    }

    private func run(_ commands: ImageViewState.ManagerCommands, host: (any ManagedObjectUser)?) {
        guard let host else { return }
        if let manager = commands.unmanage { manager.unmanage(host) }
        if let manager = commands.manage { manager.manage(host) }
    }

    // MARK: - Draining

    private enum Step {
        case deliver(@Sendable (ImageViewEvent) -> Void, ImageViewEvent)
        case skip
    }

    /// Delivers the latest display and the pending callbacks, unless another drain is running
    /// (it will deliver them).
    func drain() {
        if drainsOnMainThread, !Thread.isMainThread {
            DispatchQueue.main.async { [self] in drain() }
            return
        }
        let claimed = core.withLock { core -> Bool in
            guard !core.isDraining else { return false }
            core.isDraining = true
            return true
        }
        guard claimed else { return }
        while let step = nextStep() {
            if case .deliver(let sink, let event) = step { sink(event) }
        }
    }

    /// The next thing to deliver, or `nil` (releasing the drain) when everything is delivered.
    private func nextStep() -> Step? {
        core.withLock { core -> Step? in
            if core.renderedVersion != core.state.displayVersion {
                core.renderedVersion = core.state.displayVersion
                core.rendered = core.state.display
                core.state.noteRendered()
                guard let sink = core.sink else { return .skip }
                return .deliver(sink, .display(core.state.display))
            }
            if let event = core.state.nextEvent() {
                guard let sink = core.sink else { return .skip }
                return .deliver(sink, event)
            }
            core.isDraining = false
            return nil
        }
    }
}
