import Foundation
import ManagedCache
import ManagedCacheLocking

extension ObjectManager {
    /// Stores an image the app has (an edited photo, a picture it drew) so that later loads of
    /// `request` (or of any request with its oid) find it: SDWebImage's `storeImage:forKey:`,
    /// Haneke's `hnk_setImage:withKey:`.
    ///
    /// - The image goes under the original key ("image": what a view or user without a format
    ///   gets), in memory before this returns, shared at once with every user of that key.
    /// - With a `format` or `processors`, the variant they make of it is made in the background
    ///   (never on the calling thread) and stored under the variant's key; users of that variant
    ///   that manage it meanwhile wait for it instead of downloading.
    /// - With `toFileCache`, the original goes to the file cache too, encoded (Apple platforms: PNG
    ///   when it has alpha, JPEG otherwise; Linux: the bytes the image was decoded from), and the
    ///   variant as a stored variant where the decoder stores variants (Apple platforms); elsewhere
    ///   a later load makes the variant again from the stored original.
    /// A load of either key under way is superseded (see `store(_:for:decoder:toFileCache:pinned:cost:completion:)`).
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager) and `avatarURL` (a URL).
    /// func save(_ edited: DecodedImage) {
    ///     let thumbnail = ImageCacheFormat(name: "thumbnail", size: PixelSize(width: 160, height: 160))
    ///     let request = ObjectRequest(url: avatarURL, oid: "avatar-42")
    ///     manager.storeImage(edited, for: request, format: thumbnail, toFileCache: true) { result in
    ///         if case .failure(let error) = result { print("not stored: \(error)") }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - image: The image, as the app has it.
    ///   - request: Whose key it goes under; `ObjectRequest(oid:)` for an oid alone.
    ///   - format: A format whose variant is stored too (default `nil`).
    ///   - processors: Processors whose variant is stored too, after the format's (default none).
    ///   - toFileCache: Whether the file cache gets them too. Default `false`.
    ///   - completion: Called once, on any thread, with the image users of the variant get (the
    ///     image itself without a format or processors), or the first reason something was not
    ///     stored. Default `nil`.
    public func storeImage(
        _ image: DecodedImage, for request: ObjectRequest, format: ImageCacheFormat? = nil, processors: [any ImageProcessor] = [],
        toFileCache: Bool = false, completion: (@Sendable (Result<DecodedImage, StoreError>) -> Void)? = nil
    ) {
        storeImage(
            image, for: request, decoder: ImageDecoder(format: format, processors: processors), toFileCache: toFileCache,
            completion: completion)
    }

    /// `storeImage(_:for:format:processors:toFileCache:completion:)`, awaiting both stores; returns
    /// the image users of the variant get.
    ///
    /// - Parameters:
    ///   - image: The image, as the app has it.
    ///   - request: Whose key it goes under; `ObjectRequest(oid:)` for an oid alone.
    ///   - format: A format whose variant is stored too (default `nil`).
    ///   - processors: Processors whose variant is stored too, after the format's (default none).
    ///   - toFileCache: Whether the file cache gets them too. Default `false`.
    /// - Returns: The image users of the variant get (the image itself without a format or processors).
    /// - Throws: `StoreError`: the first reason something was not stored (a processor failing is
    ///   `.makingFailed`; the file cache's reasons only with `toFileCache`).
    @discardableResult
    public func storeImage(
        _ image: DecodedImage, for request: ObjectRequest, format: ImageCacheFormat? = nil, processors: [any ImageProcessor] = [],
        toFileCache: Bool = false
    ) async throws(StoreError) -> DecodedImage {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<DecodedImage, StoreError>, Never>) in
            storeImage(image, for: request, format: format, processors: processors, toFileCache: toFileCache) {
                continuation.resume(returning: $0)
            }
        }
        return try result.get()
    }

    /// Stores `image` under the original key and, when `decoder` makes a variant, the variant it
    /// makes of it under the decoder's key (made in the background).
    func storeImage(
        _ image: DecodedImage, for request: ObjectRequest, decoder: ImageDecoder, toFileCache: Bool,
        completion: (@Sendable (Result<DecodedImage, StoreError>) -> Void)?
    ) {
        let original = ImageDecoder(backend: decoder.backend, maximumPixelCount: decoder.maximumPixelCount)
        let outcome = StoreOutcome(parts: decoder.makesVariant ? 2 : 1, image: image, completion: completion)
        store(image, for: request, decoder: original, toFileCache: toFileCache) { outcome.finish($0.map { nil }) }
        guard decoder.makesVariant else { return }
        // A variant the decoder does not store (Linux, or a format that keeps it in memory) is made
        // again from the original on a later load: only the original goes to the file cache.
        store(
            for: request, decoder: decoder, toFileCache: toFileCache && decoder.storesVariant,
            making: { try decoder.processImage(image) }, completion: { outcome.finish($0.map { $0 }) })
    }
}

/// Collects the stores of one `storeImage` call and reports once all have finished: the variant
/// image (or the image itself), or the first failure.
private final class StoreOutcome: Sendable {
    private struct State {
        var remaining: Int
        var image: DecodedImage
        var failure: StoreError?
    }

    private let state: Lock<State>
    private let completion: (@Sendable (Result<DecodedImage, StoreError>) -> Void)?

    init(parts: Int, image: DecodedImage, completion: (@Sendable (Result<DecodedImage, StoreError>) -> Void)?) {
        state = Lock(State(remaining: parts, image: image))
        self.completion = completion
    }

    /// One store finished, with the image it made (`nil`: it stored the image as it was).
    func finish(_ result: Result<DecodedImage?, StoreError>) {
        let done = state.withLock { state -> Result<DecodedImage, StoreError>? in
            switch result {
            case .success(let made): if let made { state.image = made }
            case .failure(let error): if state.failure == nil { state.failure = error }
            }
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            return state.failure.map { .failure($0) } ?? .success(state.image)
        }
        if let done { completion?(done) }
    }
}
