#if canImport(UIKit) && !os(watchOS)
// The types apps have most, as main-actor users of the manager — a table-view cell, a
// view controller and an observable view model — with no @unchecked Sendable, @preconcurrency or
// nonisolated(unsafe); and a SwiftUI screen with `ManagedImage`.
import Combine
import ManagedCache
import ManagedCacheUIKit
import SwiftUI
import UIKit

struct Article: Decodable, Sendable {
    let title: String
    let summary: String
}

/// A cell that is itself the user: its request and decoder are read on the main actor by
/// `manage`, its callbacks run there and touch its labels directly.
final class ArticleCell: UITableViewCell, MainActorObjectUser {
    var objectRequest: ObjectRequest?
    let objectDecoder = JSONObjectDecoder<Article>()
    private let titleLabel = UILabel()

    func show(_ url: URL, manager: ObjectManager) {
        objectRequest = ObjectRequest(url: url, priority: .high)  // on screen: ahead of prefetches
        titleLabel.text = "…"
        manager.manage(self)  // a memory hit arrives before this returns
    }

    func managedObjectReady(_ article: Article, origin: DataOrigin, request: ObjectRequest) {
        titleLabel.text = article.title
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        titleLabel.text = "unavailable"
    }

    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        titleLabel.text = progress.fractionCompleted.map { "\(Int($0 * 100)) %" } ?? "…"
    }
}

/// A view controller that is the user of its own content.
final class ArticleViewController: UIViewController, MainActorObjectUser {
    var objectRequest: ObjectRequest?
    let objectDecoder = JSONObjectDecoder<Article>()
    private let summaryLabel = UILabel()
    private let manager: ObjectManager

    init(url: URL, manager: ObjectManager) {
        self.manager = manager
        objectRequest = ObjectRequest(url: url)
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) { nil }

    override func viewDidLoad() {
        super.viewDidLoad()
        view.addSubview(summaryLabel)
        manager.manage(self)
    }

    func managedObjectReady(_ article: Article, origin: DataOrigin, request: ObjectRequest) {
        title = article.title
        summaryLabel.text = article.summary
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        summaryLabel.text = "\(error)"
    }
}

/// An observable view model (iOS 15: `ObservableObject`; `@Observable` needs iOS 17).
@MainActor
final class ArticleViewModel: ObservableObject, MainActorObjectUser {
    var objectRequest: ObjectRequest?
    let objectDecoder = JSONObjectDecoder<Article>()
    private(set) var title = "" { willSet { objectWillChange.send() } }
    private(set) var isLoading = false { willSet { objectWillChange.send() } }

    func load(_ url: URL, manager: ObjectManager) {
        objectRequest = ObjectRequest(url: url)
        isLoading = true
        manager.manage(self)
    }

    func managedObjectReady(_ article: Article, origin: DataOrigin, request: ObjectRequest) {
        title = article.title
        isLoading = false
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        title = "unavailable"
        isLoading = false
    }
}

/// A SwiftUI row with the default content and one that draws each phase itself.
struct AuthorRow: View {
    let avatarURL: URL
    let coverURL: URL

    var body: some View {
        ZStack {
            ManagedImage(url: coverURL, transition: .crossDissolve(duration: 0.2))
                .frame(height: 120)
            ManagedImage(url: avatarURL, priority: .high) { phase in
                if let image = phase.image?.uiImage() {
                    Image(uiImage: image).resizable()
                } else {
                    Color.secondary
                }
            }
            .frame(width: 44, height: 44)
        }
    }
}
#endif
