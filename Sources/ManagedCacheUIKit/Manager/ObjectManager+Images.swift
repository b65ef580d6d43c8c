import Foundation
import ManagedCache

/// Image conveniences: an image for a URL without writing a user, now if it is in memory.
extension ObjectManager {
    /// Returns the image now if it is in memory, else loads it and calls `completion` on the main
    /// actor: JMImageCache's `imageForURL:delegate:`, for UIKit code.
    ///
    /// ```swift
    /// import ManagedCacheUIKit
    /// import UIKit
    ///
    /// @MainActor func show(_ url: URL, in imageView: UIImageView, manager: ObjectManager) {
    ///     if let image = manager.image(for: url, onMainActor: { result in
    ///         if case .success(let image) = result { imageView.image = image.uiImage() }
    ///     }) {
    ///         imageView.image = image.uiImage()  // in memory: no callback will come
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - url: Where the image comes from.
    ///   - oid: The key that identifies the image instead of the URL (default `nil`: the URL).
    ///   - format: How the image is decoded and resized (default `nil`: as it is).
    ///   - completion: Called once on the main actor with the image or the typed error, unless
    ///     the image is returned at once.
    /// - Returns: the shared image of `url` (keyed by `oid` when given) and `format`, if the memory
    ///   cache or a live user holds it; `completion` is then never called. Otherwise `nil`.
    ///
    /// The load shares downloads and caches with every other user of the key, takes no
    /// loading-buffer slot (like the `async` API), and runs to completion.
    @MainActor @discardableResult
    public func image(
        for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil,
        onMainActor completion: @escaping @MainActor (Result<DecodedImage, ManagedCacheError>) -> Void
    ) -> DecodedImage? {
        let request = ObjectRequest(url: url, oid: oid)
        let decoder = ImageDecoder(format: format)
        if let image = cachedObject(for: request, decoder: decoder) { return image }
        Task { @MainActor in
            completion(await loadResult(request, decoder: decoder))
        }
        return nil
    }

    /// Returns the image now if it is in memory, else loads it and calls `completion` on
    /// whichever thread finished the work (for code off the main thread; UIKit code uses
    /// ``image(for:oid:format:onMainActor:)``).
    ///
    /// - Parameters:
    ///   - url: Where the image comes from.
    ///   - oid: The key that identifies the image instead of the URL (default `nil`: the URL).
    ///   - format: How the image is decoded and resized (default `nil`: as it is).
    ///   - completion: Called once, on any thread, with the image or the typed error, unless the
    ///     image is returned at once.
    /// - Returns: the shared image if the memory cache or a live user holds it (`completion` is
    ///   then never called), else `nil`.
    @discardableResult
    public func image(
        for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil,
        completion: @escaping @Sendable (Result<DecodedImage, ManagedCacheError>) -> Void
    ) -> DecodedImage? {
        let request = ObjectRequest(url: url, oid: oid)
        let decoder = ImageDecoder(format: format)
        if let image = cachedObject(for: request, decoder: decoder) { return image }
        Task {
            completion(await loadResult(request, decoder: decoder))
        }
        return nil
    }

    /// Awaits the image of `request` as a `Result`.
    private func loadResult(_ request: ObjectRequest, decoder: ImageDecoder) async -> Result<DecodedImage, ManagedCacheError> {
        do throws(ManagedCacheError) {
            return .success(try await object(for: request, decoder: decoder))
        } catch {
            return .failure(error)
        }
    }

    /// Looks an image up in memory, without loading anything.
    ///
    /// - Parameters:
    ///   - url: Where the image comes from.
    ///   - oid: The key that identifies the image instead of the URL. Default `nil`: the URL.
    ///   - format: The format it was decoded with. Default `nil`: as it is.
    /// - Returns: The shared image, if the memory cache or a live user holds it; else `nil`.
    public func cachedImage(for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil) -> DecodedImage? {
        cachedObject(for: ObjectRequest(url: url, oid: oid), decoder: ImageDecoder(format: format))
    }

    /// Loads an image, from memory, the file cache or the network.
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager) and `avatarURL` (a URL).
    /// let avatar = try await manager.image(for: avatarURL)
    /// print(avatar.pixelSize)
    /// ```
    ///
    /// - Parameters:
    ///   - url: Where the image comes from.
    ///   - oid: The key that identifies the image instead of the URL. Default `nil`: the URL.
    ///   - format: How the image is decoded and resized. Default `nil`: as it is.
    /// - Returns: The shared image.
    /// - Throws: The load's ``/ManagedCache/ManagedCacheError``; `.cancelled(.caller)` when the
    ///   calling task is cancelled.
    public func image(for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil) async throws(ManagedCacheError) -> DecodedImage {
        try await object(for: ObjectRequest(url: url, oid: oid), decoder: ImageDecoder(format: format))
    }

    /// Removes the image of `url` and `format` from memory (views showing it keep it), and its
    /// downloaded bytes from the file cache when `fromFileCache` is `true`: JMImageCache's
    /// `removeImageForURL:`.
    ///
    /// - Parameters:
    ///   - url: Where the image comes from.
    ///   - oid: The key that identifies the image instead of the URL. Default `nil`: the URL.
    ///   - format: The format whose variant to remove. Default `nil`: the image as it is.
    ///   - fromFileCache: Whether to delete the downloaded bytes too. Default `false`.
    public func removeImage(for url: URL, oid: String? = nil, format: ImageCacheFormat? = nil, fromFileCache: Bool = false) {
        removeObject(for: ObjectRequest(url: url, oid: oid), decoder: ImageDecoder(format: format), fromFileCache: fromFileCache)
    }
}
