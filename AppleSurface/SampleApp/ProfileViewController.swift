#if canImport(UIKit) && !os(watchOS)
import ManagedCache
import ManagedCacheUIKit
import UIKit

/// A custom user (HJCache's `HJMOUser`) that a view controller owns: the manager holds it weakly
/// and, because `callbackDelivery` is `.mainQueue`, calls it on the main thread, where it may
/// update the controller's views.
final class StatusTextUser: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder = DataDecoder()
    var callbackDelivery: CallbackDelivery { .mainQueue }
    private let show: @MainActor (String) -> Void

    init(url: URL, show: @escaping @MainActor (String) -> Void) {
        objectRequest = ObjectRequest(url: url)
        self.show = show
    }

    func managedObjectReady(_ object: Data, origin: DataOrigin, request: ObjectRequest) {
        // Delivered on the main queue, as `callbackDelivery` asks.
        MainActor.assumeIsolated { show(String(decoding: object, as: UTF8.self)) }
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        MainActor.assumeIsolated { show("unavailable (\(error))") }
    }
}

/// A profile screen: an avatar (a `ManagedImageView`), a status line loaded by a custom user,
/// a banner loaded with `ObjectUser` closures, and a header image loaded with the
/// completion-handler API. Every callback below updates views.
final class ProfileViewController: UIViewController {
    private let manager: ObjectManager
    private let avatarView = ManagedImageView(frame: CGRect(x: 0, y: 0, width: 64, height: 64))
    private let statusLabel = UILabel(frame: .zero)
    private let bannerView = UIImageView(frame: .zero)
    private let headerView = UIImageView(frame: .zero)
    private let progressLabel = UILabel(frame: .zero)
    private var statusUser: StatusTextUser?
    private var bannerUser: ObjectUser<ImageDecoder>?
    private let baseURL: URL

    init(manager: ObjectManager, baseURL: URL) {
        self.manager = manager
        self.baseURL = baseURL
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) {
        manager = .shared
        baseURL = URL(fileURLWithPath: "/")
        super.init(coder: coder)
    }

    override func viewDidLoad() {
        super.viewDidLoad()
        for subview in [avatarView, statusLabel, bannerView, headerView, progressLabel] { view.addSubview(subview) }
        avatarView.manager = manager
        avatarView.delegate = self
        avatarView.load(url: baseURL.appendingPathComponent("avatar.png"), oid: "me-avatar")

        let user = StatusTextUser(url: baseURL.appendingPathComponent("status.txt")) { [weak self] text in
            self?.statusLabel.text = text
        }
        statusUser = user  // the manager holds users weakly: keep it
        manager.manage(user)

        // ObjectUser whose closures run on the main actor: they update views.
        let banner = ObjectUser.onMainActor(
            request: ObjectRequest(url: baseURL.appendingPathComponent("banner.png")), decoder: ImageDecoder(),
            onReady: { [weak self] image, _ in self?.bannerView.image = image.uiImage(scale: 2) },
            onFailure: { [weak self] _ in self?.bannerView.image = nil },
            onProgress: { [weak self] progress in
                self?.progressLabel.text = progress.fractionCompleted.map { "\(Int($0 * 100)) %" }
            })
        bannerUser = banner
        manager.manage(banner)

        // The completion-handler API, called back on the main actor.
        let headerURL = baseURL.appendingPathComponent("header.png")
        if let image = manager.image(
            for: headerURL,
            onMainActor: { [weak self] result in
                if case .success(let image) = result { self?.headerView.image = image.uiImage(scale: 2) }
            })
        {
            headerView.image = image.uiImage(scale: 2)
        }
    }

    /// async/await from the main actor.
    func reloadHeader() async {
        let headerURL = baseURL.appendingPathComponent("header.png")
        do {
            let image = try await manager.image(for: headerURL)
            headerView.image = image.uiImage(scale: 2)
        } catch {
            headerView.image = nil
        }
    }
}

extension ProfileViewController: ManagedImageViewDelegate {
    func managedImageView(_ view: ManagedImageView, didSet image: DecodedImage, from origin: DataOrigin) {
        view.accessibilityLabel = "Your avatar"
    }

    func managedImageViewWasTapped(_ view: ManagedImageView) {
        present(UIViewController(), animated: true)
    }
}
#endif
