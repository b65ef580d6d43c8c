import Foundation
import ManagedCacheLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `UIImageView+Cached` keeps in statics: one shared dictionary of up to 50 images keyed by
/// the URL's text, emptied completely when full, and (here) one shared `URLSession` with the
/// default 6 connections per host to download through. The scroll scenario's baseline.
/// (`../shared/seeds/001_0b57e04c1ea7111f.txt`.)
final class NaiveImageCache: Sendable {
    /// The seed's `MAX_CACHED_IMAGES`.
    static let maximumImages = 50

    /// The session every view downloads through.
    let session: URLSession
    private let images = Lock<[String: Data]>([:])
    private let received = Lock<Int>(0)

    /// A cache with its own session; call `invalidate()` when done.
    init() {
        session = BaselineSession.make()
    }

    /// The image for `url`, if cached.
    func image(for url: URL) -> Data? {
        images.withLock { $0[url.description] }
    }

    /// Caches `image` for `url`, first emptying the whole cache when it holds 50 images.
    func store(_ image: Data, for url: URL) {
        received.withLock { $0 += image.count }
        images.withLock { images in
            if images.count >= Self.maximumImages { images.removeAll() }
            images[url.description] = image
        }
    }

    /// Body bytes of every download that completed.
    var bytesReceived: Int { received.withLock { $0 } }

    /// Cancels whatever is still running and releases the session.
    func invalidate() {
        session.invalidateAndCancel()
    }
}
