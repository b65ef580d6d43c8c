import Dispatch
import Foundation
import ManagedCache

extension ObjectManager {
    /// Returns the image now if it is in memory, else loads it and calls `completion`:
    /// JMImageCache's `imageForURL:delegate:`.
    ///
    /// ```swift
    /// if let image = manager.image(for: url, completion: { result in
    ///     if case .success(let image) = result { cell.show(image) }
    /// }) {
    ///     cell.show(image)   // in memory: no callback will come
    /// }
    /// ```
    ///
    /// - Returns: the shared image of `url` (keyed by `oid` when given) and `format`, if the memory
    ///   cache or a live user holds it; `completion` is then never called. Otherwise `nil`, and
    ///   `completion` is called once with the image or the typed error.
    /// - The load shares downloads and caches with every other user of the key, takes no
    ///   loading-buffer slot (like the `async` API), and runs to completion.
    /// - `delivery` says where `completion` runs: `.immediate` (default, any thread) or `.mainQueue`.
    @discardableResult
    public func image(
        for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil, delivery: CallbackDelivery = .immediate,
        completion: @escaping @Sendable (Result<DecodedImage, ManagedCacheError>) -> Void
    ) -> DecodedImage? {
        let request = ObjectRequest(url: url, oid: oid)
        let decoder = ImageDecoder(format: format)
        if let image = cachedObject(for: request, decoder: decoder) { return image }
        Task {
            let result: Result<DecodedImage, ManagedCacheError>
            do throws(ManagedCacheError) {
                result = .success(try await object(for: request, decoder: decoder))
            } catch {
                result = .failure(error)
            }
            switch delivery {
            case .immediate: completion(result)
            case .mainQueue: DispatchQueue.main.async { completion(result) }
            }
        }
        return nil
    }

    /// The image of `url` and `format` if it is in memory now, without loading anything.
    public func cachedImage(for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil) -> DecodedImage? {
        cachedObject(for: ObjectRequest(url: url, oid: oid), decoder: ImageDecoder(format: format))
    }

    /// Loads the image of `url` and `format`, from memory, the file cache or the network.
    /// Cancelling the calling task stops waiting (`.cancelled(.caller)`).
    public func image(for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil) async throws(ManagedCacheError) -> DecodedImage {
        try await object(for: ObjectRequest(url: url, oid: oid), decoder: ImageDecoder(format: format))
    }

    /// Removes the image of `url` and `format` from memory (views showing it keep it), and its
    /// downloaded bytes from the file cache when `fromFileCache` is `true`: JMImageCache's
    /// `removeImageForURL:`.
    public func removeImage(for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil, fromFileCache: Bool = false) {
        removeObject(for: ObjectRequest(url: url, oid: oid), decoder: ImageDecoder(format: format), fromFileCache: fromFileCache)
    }
}
