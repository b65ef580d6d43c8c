import Foundation
import ManagedCacheLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `UIImageView` with the `UIImageView+Cached` category: `load(from:)` looks in the shared cache,
/// otherwise starts a download that is never cancelled and, whenever it finishes, sets the image
/// (whatever row the view shows by then, as the seed does).
final class NaiveImageView: Sendable {
    private let cache: NaiveImageCache
    /// The URL of the image shown now (`nil`: none yet), and every URL whose image it has shown.
    private let shown = Lock<(current: URL?, ever: Set<URL>)>((nil, []))

    /// A view loading through `cache`.
    init(cache: NaiveImageCache) {
        self.cache = cache
    }

    /// `loadFromURL:`: a cache hit is shown at once; a miss downloads in the background.
    func load(from url: URL) {
        if cache.image(for: url) != nil {
            setImage(from: url)
            return
        }
        cache.session.dataTask(with: url) { [weak self, cache] data, response, _ in
            guard let data, (response as? HTTPURLResponse)?.statusCode == 200 else { return }
            cache.store(data, for: url)
            self?.setImage(from: url)
        }.resume()
    }

    /// `setImage:` (performed "on the main thread" in the seed; here under a lock).
    private func setImage(from url: URL) {
        shown.withLock { shown in
            shown.current = url
            shown.ever.insert(url)
        }
    }

    /// The URL whose image the view shows now.
    var shownURL: URL? { shown.withLock { $0.current } }

    /// Whether the view has shown the image of `url` at some point (it may have been replaced
    /// since by an older download finishing later: the seed's wrong-image bug).
    func hasShown(_ url: URL) -> Bool {
        shown.withLock { $0.ever.contains(url) }
    }
}
